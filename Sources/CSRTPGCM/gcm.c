#include "CSRTPGCM.h"
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

struct tutti_srtp_gcm {
    EVP_CIPHER_CTX *cipher;
    uint8_t salt[12];
    uint32_t ssrc;
    /* Sender: the next packet's roll-over counter. Receiver: RFC 3711 §3.3.1's state. */
    uint32_t roc;
    uint16_t highest;
    int seen;
    /* Receiver: the replay window, a ring of `window` bits: index i's bit at position i mod window (set: seen).
       The bits of the `window` indices up to `newest` are current; moving `newest` on clears the bits of the
       indices it passes, so a packet costs one or two bit operations, not a shift of the whole window. */
    uint64_t newest;
    uint32_t window;
    uint64_t *bits;
    uint16_t last_sent;
    int sent;
    /* Receiver: the RTP timestamp of the packet at (roc, highest), when one opened since creation or placing. */
    uint32_t highest_timestamp;
    int timestamp_known;
};

/* RFC 3711 §4.3.1 with AES-CM as the PRF: x = (master salt, padded to 14 bytes) XOR (label << 48); the output
   is AES_k(x || 0), AES_k(x || 1)… as libsrtp derives it. */
static int derive(const uint8_t *master, uint8_t label, uint8_t *out, int length) {
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (!ctx) return 0;
    uint8_t iv[16] = {0}, zeros[32] = {0};
    memcpy(iv, master + 16, 12);
    iv[7] ^= label;
    int ok = EVP_EncryptInit_ex(ctx, EVP_aes_128_ctr(), NULL, master, iv) == 1;
    int written = 0;
    ok = ok && EVP_EncryptUpdate(ctx, out, &written, zeros, length) == 1 && written == length;
    EVP_CIPHER_CTX_free(ctx);
    return ok;
}

tutti_srtp_gcm *tutti_srtp_gcm_create(const uint8_t *master, uint32_t ssrc, uint32_t window) {
    if (window < 64) window = 64;
    if (window > 32768) window = 32768;
    tutti_srtp_gcm *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->window = (window + 63) / 64 * 64;
    c->bits = calloc(c->window / 64, sizeof(uint64_t));
    uint8_t key[16];
    c->cipher = EVP_CIPHER_CTX_new();
    if (!c->bits || !c->cipher || !derive(master, 0x00, key, 16) || !derive(master, 0x02, c->salt, 12) ||
        EVP_CipherInit_ex(c->cipher, EVP_aes_128_gcm(), NULL, key, NULL, 1) != 1) {
        tutti_srtp_gcm_free(c);
        return NULL;
    }
    memset(key, 0, sizeof key);
    c->ssrc = ssrc;
    return c;
}

void tutti_srtp_gcm_free(tutti_srtp_gcm *c) {
    if (!c) return;
    if (c->cipher) EVP_CIPHER_CTX_free(c->cipher);
    free(c->bits);
    memset(c, 0, sizeof *c);
    free(c);
}

/* The RTP header's length (fixed part, CSRCs, extension), or -1 when the packet is not RTP of `ssrc`. */
static int header_length(const uint8_t *p, int length, uint32_t ssrc) {
    if (length < 12 || (p[0] >> 6) != 2) return -1;
    uint32_t s = (uint32_t)p[8] << 24 | (uint32_t)p[9] << 16 | (uint32_t)p[10] << 8 | p[11];
    if (s != ssrc) return -1;
    int h = 12 + 4 * (p[0] & 0x0F);
    if (p[0] & 0x10) {
        if (length < h + 4) return -1;
        h += 4 + 4 * ((p[h + 2] << 8) | p[h + 3]);
    }
    return h <= length ? h : -1;
}

/* RFC 7714 §8.1: IV = (0x0000 || SSRC || ROC || SEQ) XOR the session salt. */
static void make_iv(const tutti_srtp_gcm *c, uint32_t roc, uint16_t seq, uint8_t iv[12]) {
    uint8_t block[12] = {0, 0, (uint8_t)(c->ssrc >> 24), (uint8_t)(c->ssrc >> 16), (uint8_t)(c->ssrc >> 8), (uint8_t)c->ssrc,
                         (uint8_t)(roc >> 24), (uint8_t)(roc >> 16), (uint8_t)(roc >> 8), (uint8_t)roc, (uint8_t)(seq >> 8),
                         (uint8_t)seq};
    for (int i = 0; i < 12; i++) iv[i] = block[i] ^ c->salt[i];
}

int tutti_srtp_gcm_protect(tutti_srtp_gcm *c, uint8_t *p, int length, int capacity) {
    int h = header_length(p, length, c->ssrc);
    if (h < 0 || length + 16 > capacity) return -1;
    uint16_t seq = (uint16_t)(p[2] << 8 | p[3]);
    if (c->sent && seq < c->last_sent && c->last_sent - seq > 0x8000) c->roc++;  /* the sequence wrapped */
    c->last_sent = seq;
    c->sent = 1;
    uint8_t iv[12];
    make_iv(c, c->roc, seq, iv);
    int n = 0;
    if (EVP_CipherInit_ex(c->cipher, NULL, NULL, NULL, iv, 1) != 1 || EVP_CipherUpdate(c->cipher, NULL, &n, p, h) != 1 ||
        EVP_CipherUpdate(c->cipher, p + h, &n, p + h, length - h) != 1 || EVP_CipherFinal_ex(c->cipher, p + length, &n) != 1 ||
        EVP_CIPHER_CTX_ctrl(c->cipher, EVP_CTRL_GCM_GET_TAG, 16, p + length) != 1)
        return -1;
    return length + 16;
}

static inline int ring_bit(const uint64_t *bits, uint32_t window, uint64_t i) {
    uint64_t at = i % window;
    return (int)(bits[at / 64] >> (at % 64) & 1);
}

static inline void ring_set(uint64_t *bits, uint32_t window, uint64_t i, int on) {
    uint64_t at = i % window;
    if (on) bits[at / 64] |= (uint64_t)1 << (at % 64);
    else bits[at / 64] &= ~((uint64_t)1 << (at % 64));
}

/* Whether index `i` is new: ahead of the newest, or behind it inside the window and not seen. */
static int replay_check(const tutti_srtp_gcm *c, uint64_t i) {
    if (!c->seen || i > c->newest) return 1;
    uint64_t behind = c->newest - i;
    if (behind >= c->window) return 0;
    return !ring_bit(c->bits, c->window, i);
}

static void replay_add(tutti_srtp_gcm *c, uint64_t i) {
    if (!c->seen || i > c->newest) {
        uint64_t shift = c->seen ? i - c->newest : c->window;
        if (shift >= c->window) {
            memset(c->bits, 0, c->window / 64 * sizeof(uint64_t));
        } else {
            /* The indices passed over (newest + 1 ... i) were not seen: their ring positions held indices a
               window older. */
            for (uint64_t k = c->newest + 1; k <= i; k++) ring_set(c->bits, c->window, k, 0);
        }
        c->newest = i;
        c->seen = 1;
    }
    ring_set(c->bits, c->window, i, 1);
}

/* Verifies and decrypts under roll-over counter `roc`; on success updates the replay window and the state. */
static int open_at(tutti_srtp_gcm *c, uint8_t *p, int length, int h, uint32_t roc) {
    uint16_t seq = (uint16_t)(p[2] << 8 | p[3]);
    uint64_t index = ((uint64_t)roc << 16) | seq;
    if (!replay_check(c, index)) return -2;
    uint8_t iv[12];
    make_iv(c, roc, seq, iv);
    int n = 0, body = length - 16 - h;
    if (EVP_CipherInit_ex(c->cipher, NULL, NULL, NULL, iv, 0) != 1 ||
        EVP_CIPHER_CTX_ctrl(c->cipher, EVP_CTRL_GCM_SET_TAG, 16, p + length - 16) != 1 ||
        EVP_CipherUpdate(c->cipher, NULL, &n, p, h) != 1 || EVP_CipherUpdate(c->cipher, p + h, &n, p + h, body) != 1 ||
        EVP_CipherFinal_ex(c->cipher, p + h + body, &n) != 1)
        return -1;
    replay_add(c, index);
    if (!c->seen || index >= (((uint64_t)c->roc << 16) | c->highest)) {
        c->roc = roc;
        c->highest = seq;
        c->highest_timestamp = (uint32_t)p[4] << 24 | (uint32_t)p[5] << 16 | (uint32_t)p[6] << 8 | p[7];
        c->timestamp_known = 1;
    }
    return length - 16;
}

/* RFC 3711 §3.3.1: the roll-over counter a packet with sequence number `seq` most likely belongs to. */
static uint32_t estimated_roc(const tutti_srtp_gcm *c, uint16_t seq) {
    uint32_t roc = c->roc;
    if (c->seen) {
        if (c->highest < 0x8000) {
            if (seq > c->highest + 0x8000 && roc > 0) roc = c->roc - 1;
        } else if (seq < c->highest - 0x8000) {
            roc = c->roc + 1;
        }
    }
    return roc;
}

int tutti_srtp_gcm_unprotect(tutti_srtp_gcm *c, uint8_t *p, int length) {
    int h = header_length(p, length, c->ssrc);
    if (h < 0 || length < h + 16) return -1;
    return open_at(c, p, length, h, estimated_roc(c, (uint16_t)(p[2] << 8 | p[3])));
}

int tutti_srtp_gcm_unprotect_by_timestamp(tutti_srtp_gcm *c, uint8_t *p, int length, uint32_t frames) {
    int h = header_length(p, length, c->ssrc);
    if (h < 0 || length < h + 16) return -1;
    if (!frames || !c->timestamp_known) return -3;
    uint32_t timestamp = (uint32_t)p[4] << 24 | (uint32_t)p[5] << 16 | (uint32_t)p[6] << 8 | p[7];
    /* How many packets after (or, negative, before) the newest this one says it is. */
    int64_t ahead = (int64_t)(int32_t)(timestamp - c->highest_timestamp) / (int64_t)frames;
    uint16_t seq = (uint16_t)(p[2] << 8 | p[3]);
    int64_t newest = (int64_t)(((uint64_t)c->roc << 16) | c->highest);
    if (newest + ahead < 0) return -3;
    uint64_t expected = (uint64_t)(newest + ahead);
    /* The counter that puts (counter, seq) nearest the expected index: one of three around it. */
    uint32_t best = (uint32_t)(expected >> 16);
    uint64_t best_distance = UINT64_MAX;
    for (int64_t candidate = (int64_t)(expected >> 16) - 1; candidate <= (int64_t)(expected >> 16) + 1; candidate++) {
        if (candidate < 0 || candidate > UINT32_MAX) continue;
        uint64_t index = ((uint64_t)candidate << 16) | seq;
        uint64_t distance = index > expected ? index - expected : expected - index;
        if (distance < best_distance) best_distance = distance, best = (uint32_t)candidate;
    }
    if (best == estimated_roc(c, seq)) return -3;
    return open_at(c, p, length, h, best);
}

void tutti_srtp_gcm_adopt(tutti_srtp_gcm *to, const tutti_srtp_gcm *from) {
    to->roc = from->roc;
    to->highest = from->highest;
    to->seen = from->seen;
    to->newest = from->newest;
    /* The newest min(windows) indices' bits, each moved to its place in `to`'s ring. */
    uint32_t kept = to->window < from->window ? to->window : from->window;
    memset(to->bits, 0, to->window / 64 * sizeof(uint64_t));
    for (uint64_t k = 0; from->seen && k < kept && k <= from->newest; k++) {
        uint64_t i = from->newest - k;
        if (ring_bit(from->bits, from->window, i)) ring_set(to->bits, to->window, i, 1);
    }
    to->last_sent = from->last_sent;
    to->sent = from->sent;
    to->highest_timestamp = from->highest_timestamp;
    to->timestamp_known = from->timestamp_known;
}

uint64_t tutti_srtp_gcm_sent_index(const tutti_srtp_gcm *c) {
    return c->sent ? ((uint64_t)c->roc << 16 | c->last_sent) : 0;
}

void tutti_srtp_gcm_place(tutti_srtp_gcm *c, uint64_t index) {
    c->roc = (uint32_t)(index >> 16);
    c->highest = (uint16_t)index;
    c->seen = 1;
    c->newest = index;
    c->timestamp_known = 0;
    memset(c->bits, 0, c->window / 64 * sizeof(uint64_t));
}
