/*
 * conns.h: the TCP connections of one request engine (xfer.c), kept so
 * that a transfer can reach its own socket while it runs, and what the
 * engine does with it: acknowledge a reply's bytes at once.
 *
 * Why: a server that writes a reply's headers and its body in two writes
 * with Nagle's algorithm on (Ceph RGW's beast frontend by default, its
 * tcp_nodelay=0; Python's http.server) holds the body until the headers
 * are acknowledged, and a client that has just sent its request is in
 * Linux's interactive ("pingpong") mode, which delays that ACK for the
 * delayed-ACK timer, at least 40 ms. A small GET then takes 41 ms on
 * loopback where 1 would do (doc/benchmarks.md, "Small requests"); a
 * fresh connection does not wait (it starts in quick-ACK mode), which is
 * why only reused connections, the ones the engine keeps for speed, were
 * slow. TCP_QUICKACK set when a reply's first bytes are read sends the
 * pending ACK at once and leaves pingpong mode for the rest of the reply;
 * it does not stick (the next request's send enters pingpong mode again),
 * so it is set again for each reply and while its body comes.
 *
 * curl names the connection a transfer uses only by its addresses
 * (CURLINFO_LOCAL_PORT, CURLINFO_PRIMARY_PORT; CURLINFO_ACTIVESOCKET
 * answers only after the transfer, and not at all after curl_easy_reset),
 * so the engine's sockets are recorded as curl opens and closes them
 * (CURLOPT_SOCKOPTFUNCTION, CURLOPT_CLOSESOCKETFUNCTION) and found by
 * their ports. A socket not found is only not acknowledged early; a wrong
 * one (never expected) would get an early ACK it does not need. Thread-safe:
 * restore workers share one engine.
 */
#ifndef SR_CONNS_H
#define SR_CONNS_H

#include <curl/curl.h>

struct sr_conns;

/* A record of no socket; NULL with err on OOM. */
struct sr_conns *sr_conns_new(char *err);
/* Free it; every handle whose connections it recorded must be cleaned
 * up first (their sockets' close calls come here). */
void sr_conns_free(struct sr_conns *cs);

/* Record the sockets e opens from now on, and close them through cs
 * (set again after each curl_easy_reset: they are options of e; a
 * connection keeps the ones it was opened with). Room for the sockets of
 * one attempt is made here, where an allocation can fail as an error:
 * 0, or -1 with err on OOM. (Handles attached side by side open their
 * sockets later, together, so curl's callback that records a socket grows
 * the table too; it has no way to say out-of-memory: without memory a
 * socket is not recorded, only not acknowledged early.) */
int sr_conns_attach(struct sr_conns *cs, CURL *e, char *err);

/* The socket of the connection e's transfer is using now (call it from
 * one of e's callbacks), CURL_SOCKET_BAD when it is not one cs opened. */
curl_socket_t sr_conns_find(struct sr_conns *cs, CURL *e);

/* Send the ACK that fd owes now, and ACK what comes next at once until
 * fd next sends: 0, or -1 when the system has no TCP_QUICKACK or refuses
 * it (fd CURL_SOCKET_BAD: -1). */
int sr_conns_ack_now(curl_socket_t fd);

#endif
