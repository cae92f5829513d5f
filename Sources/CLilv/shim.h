#ifndef TUTTI_CLILV_SHIM_H
#define TUTTI_CLILV_SHIM_H
/*
 * lilv, the LV2 host library: discovers installed plug-ins (LV2_PATH, else the system's LV2 folders), reads
 * their ports, and instantiates and runs them. Tutti's TuttiLV2 module is its only user.
 */
#include <lilv/lilv.h>
#include <lv2/core/lv2.h>

#endif
