// libsodium's secretbox (XSalsa20-Poly1305), for OwnTracks' encrypted payloads, loaded with dlopen
// on first use: a process that never encrypts never maps it.
#ifndef LOCATIONKEEPALIVE_CSODIUM_SHIM_H
#define LOCATIONKEEPALIVE_CSODIUM_SHIM_H

#include <dlfcn.h>
#include <stddef.h>
#include <sodium.h>

#define CSODIUM_FUNCTIONS(X) \
    X(sodium_init) X(crypto_secretbox_easy) X(crypto_secretbox_open_easy) X(randombytes_buf)

typedef struct {
#define CSODIUM_FIELD(name) __typeof__(&name) name;
    CSODIUM_FUNCTIONS(CSODIUM_FIELD)
#undef CSODIUM_FIELD
    const char *error;
} csodium_table;

/// The sizes of crypto_secretbox, as this header has them.
static const size_t csodium_key_bytes = crypto_secretbox_KEYBYTES;
static const size_t csodium_nonce_bytes = crypto_secretbox_NONCEBYTES;
static const size_t csodium_mac_bytes = crypto_secretbox_MACBYTES;

/// Fills `api` (storage the caller keeps for the process, zeroed) and returns NULL, or why the
/// library could not be loaded. Call once.
static inline const char *csodium_load(csodium_table *api) {
    void *library = dlopen("libsodium.so.23", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        api->error = dlerror();
        return api->error;
    }
#define CSODIUM_LOAD(name) \
    api->name = (__typeof__(&name))dlsym(library, #name); \
    if (api->name == NULL) { api->error = "libsodium.so.23 lacks " #name; return api->error; }
    CSODIUM_FUNCTIONS(CSODIUM_LOAD)
#undef CSODIUM_LOAD
    if (api->sodium_init() < 0) {
        api->error = "sodium_init failed";
        return api->error;
    }
    return NULL;
}

/// `ciphertext` (message length + MAC bytes) from `message`, `nonce` and `key`.
static inline int csodium_seal(const csodium_table *api, unsigned char *ciphertext, const unsigned char *message,
                               unsigned long long length, const unsigned char *nonce, const unsigned char *key) {
    return api->crypto_secretbox_easy(ciphertext, message, length, nonce, key);
}

/// `message` from `ciphertext` (length includes the MAC): 0, or -1 when it does not verify.
static inline int csodium_open(const csodium_table *api, unsigned char *message, const unsigned char *ciphertext,
                               unsigned long long length, const unsigned char *nonce, const unsigned char *key) {
    return api->crypto_secretbox_open_easy(message, ciphertext, length, nonce, key);
}

static inline void csodium_random(const csodium_table *api, void *buffer, size_t size) { api->randombytes_buf(buffer, size); }

#endif
