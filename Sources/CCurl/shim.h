// libcurl, the HTTP client under LocationKeepAlive's HTTP delivery, loaded with dlopen on
// first use: linked, it and its libraries (OpenSSL, nghttp2, libssh2, Kerberos, LDAP...) cost
// every keepalive process about 8 MB of RSS, even `watch`, which never delivers.
// curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call: one typed helper each.
#ifndef LOCATIONKEEPALIVE_CCURL_SHIM_H
#define LOCATIONKEEPALIVE_CCURL_SHIM_H

#include <dlfcn.h>
#include <stddef.h>
#include <curl/curl.h>

#define CCURL_FUNCTIONS(X) \
    X(global_init) X(easy_init) X(easy_cleanup) X(easy_reset) X(easy_setopt) X(easy_perform) \
    X(easy_strerror) X(easy_getinfo) X(slist_append) X(slist_free_all)

typedef struct {
#define CCURL_FIELD(name) __typeof__(&curl_##name) name;
    CCURL_FUNCTIONS(CCURL_FIELD)
#undef CCURL_FIELD
    const char *error;
} ccurl_table;

/// Fills `api` (storage the caller keeps for the process, zeroed) and returns NULL, or why
/// the library could not be loaded. Call once.
static inline const char *ccurl_load(ccurl_table *api) {
    void *library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        api->error = dlerror();
        return api->error;
    }
#define CCURL_LOAD(name) \
    api->name = (__typeof__(&curl_##name))dlsym(library, "curl_" #name); \
    if (api->name == NULL) { api->error = "libcurl.so.4 lacks curl_" #name; return api->error; }
    CCURL_FUNCTIONS(CCURL_LOAD)
#undef CCURL_LOAD
    api->global_init(CURL_GLOBAL_DEFAULT);
    return NULL;
}

// The calls LocationKeepAlive makes, through the loaded table (each takes the table `ccurl_load` filled).
static inline CURL *ccurl_easy_init(const ccurl_table *api) { return api->easy_init(); }
static inline void ccurl_easy_cleanup(const ccurl_table *api, CURL *curl) { api->easy_cleanup(curl); }
static inline void ccurl_easy_reset(const ccurl_table *api, CURL *curl) { api->easy_reset(curl); }
static inline CURLcode ccurl_easy_perform(const ccurl_table *api, CURL *curl) { return api->easy_perform(curl); }
static inline const char *ccurl_easy_strerror(const ccurl_table *api, CURLcode code) { return api->easy_strerror(code); }
static inline struct curl_slist *ccurl_slist_append(const ccurl_table *api, struct curl_slist *list, const char *text) {
    return api->slist_append(list, text);
}
static inline void ccurl_slist_free_all(const ccurl_table *api, struct curl_slist *list) { api->slist_free_all(list); }

static inline CURLcode ccurl_set_long(const ccurl_table *api, CURL *curl, CURLoption option, long value) {
    return api->easy_setopt(curl, option, value);
}

static inline CURLcode ccurl_set_string(const ccurl_table *api, CURL *curl, CURLoption option, const char *value) {
    return api->easy_setopt(curl, option, value);
}

static inline CURLcode ccurl_set_pointer(const ccurl_table *api, CURL *curl, CURLoption option, void *value) {
    return api->easy_setopt(curl, option, value);
}

static inline CURLcode ccurl_set_write_function(const ccurl_table *api, CURL *curl, size_t (*function)(char *, size_t, size_t, void *)) {
    return api->easy_setopt(curl, CURLOPT_WRITEFUNCTION, function);
}

static inline CURLcode ccurl_response_code(const ccurl_table *api, CURL *curl, long *code) {
    return api->easy_getinfo(curl, CURLINFO_RESPONSE_CODE, code);
}

#endif
