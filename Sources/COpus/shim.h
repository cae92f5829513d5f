#ifndef TUTTI_COPUS_SHIM_H
#define TUTTI_COPUS_SHIM_H
#include <opus.h>
#endif
