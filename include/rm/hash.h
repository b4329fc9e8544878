/*
 * SHA-256 through OpenSSL's libcrypto, for build-context fingerprints (an image whose
 * fingerprint label matches is up to date and needs no build).
 */
#ifndef RM_HASH_H
#define RM_HASH_H

#include <stddef.h>

typedef struct rm_hash rm_hash;

rm_hash *rm_hash_new(void); /* aborts on allocation failure */
void rm_hash_update(rm_hash *h, const void *p, size_t n);
/* Writes 64 hex digits and a NUL into out, and frees h. */
void rm_hash_final_hex(rm_hash *h, char out[65]);

#endif
