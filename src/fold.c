/*
 * fold.c
 */
#include "worklist.h"
