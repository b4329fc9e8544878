#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "rm/util.h"

struct rm_hash {
	EVP_MD_CTX *ctx;
};

rm_hash *rm_hash_new(void)
{
	rm_hash *h = rm_xcalloc(1, sizeof(*h));
	h->ctx = EVP_MD_CTX_new();
	if (!h->ctx || EVP_DigestInit_ex(h->ctx, EVP_sha256(), NULL) != 1) {
		fputs("run_models: fatal: cannot initialise SHA-256\n", stderr);
		abort();
	}
	return h;
}

void rm_hash_update(rm_hash *h, const void *p, size_t n)
{
	EVP_DigestUpdate(h->ctx, p, n);
}

void rm_hash_final_hex(rm_hash *h, char out[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int len = 0;
	static const char hex[] = "0123456789abcdef";

	EVP_DigestFinal_ex(h->ctx, md, &len);
	for (unsigned int i = 0; i < len && i < 32; i++) {
		out[2 * i] = hex[md[i] >> 4];
		out[2 * i + 1] = hex[md[i] & 15];
	}
	out[64] = '\0';
	EVP_MD_CTX_free(h->ctx);
	free(h);
}
