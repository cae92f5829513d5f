#ifndef TUTTI_CSAMPLERATE_SHIM_H
#define TUTTI_CSAMPLERATE_SHIM_H
#include <samplerate.h>
#endif
