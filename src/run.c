/*
 * run.c
 */
#include "worklist.h"
