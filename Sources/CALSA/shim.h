// The thin C layer under LocationKeepAlive's silent audio player.
// Only what Swift cannot call directly lives here.
#ifndef LOCATIONKEEPALIVE_CALSA_SHIM_H
#define LOCATIONKEEPALIVE_CALSA_SHIM_H

#include <alsa/asoundlib.h>

/// ALSA's error handler type is variadic: a no-op one, so a missing device does not print to stderr.
static void calsa_quiet_error_handler(const char *file, int line, const char *function, int err, const char *fmt, ...) {
    (void)file; (void)line; (void)function; (void)err; (void)fmt;
}

static inline void calsa_silence_library_errors(void) {
    snd_lib_error_set_handler(calsa_quiet_error_handler);
}

/// Opens a playback PCM that never blocks.
static inline int calsa_open_playback(snd_pcm_t **pcm, const char *device) {
    return snd_pcm_open(pcm, device, SND_PCM_STREAM_PLAYBACK, SND_PCM_NONBLOCK);
}

/// S16_LE, interleaved, with resampling allowed.
static inline int calsa_configure(snd_pcm_t *pcm, unsigned int channels, unsigned int rate, unsigned int latency_us) {
    return snd_pcm_set_params(pcm, SND_PCM_FORMAT_S16_LE, SND_PCM_ACCESS_RW_INTERLEAVED, channels, rate, 1, latency_us);
}

#endif
