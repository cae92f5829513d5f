#ifndef TUTTI_CJACK_SHIM_H
#define TUTTI_CJACK_SHIM_H
/*
 * The JACK client API (libjack, from jackd2's libjack-jackd2-dev), as TuttiJACK uses it.
 *
 * jack_client_open is variadic ("jack_options_t options, jack_status_t *status, ..."), which Swift cannot
 * call: tutti_jack_client_open gives it a fixed signature, passing a server name (JackServerName) only when
 * one is given; with none, libjack picks the server from $JACK_DEFAULT_SERVER, else "default". Control
 * plane only (it connects to the server and may block).
 */
#include <stddef.h>
#include <jack/jack.h>
#include <jack/types.h>

static inline jack_client_t *tutti_jack_client_open(
    const char *client_name, jack_options_t options, jack_status_t *status, const char *server_name) {
    if (server_name != NULL) {
        return jack_client_open(client_name, (jack_options_t)(options | JackServerName), status, server_name);
    }
    return jack_client_open(client_name, options, status);
}

#endif
