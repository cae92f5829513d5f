#ifndef TUTTI_CSRTP_SHIM_H
#define TUTTI_CSRTP_SHIM_H
#include <srtp2/srtp.h>
#endif
