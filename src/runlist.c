/*
 * runlist.c
 */
#include "worklist.h"
