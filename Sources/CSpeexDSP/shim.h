#ifndef TUTTI_CSPEEXDSP_SHIM_H
#define TUTTI_CSPEEXDSP_SHIM_H
#include <speex/speex_resampler.h>
#endif
