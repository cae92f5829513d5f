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
    /* Receiver: the replay window, a bit per index behind `newest` (bit 0: newest). */
    uint64_t newest;
    uint32_t window;
    uint64_t *bits;
    uint16_t last_sent;
    int sent;
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

/* Whether index `i` is new: ahead of the newest, or behind it inside the window and not seen. */
static int replay_check(const tutti_srtp_gcm *c, uint64_t i) {
    if (!c->seen || i > c->newest) return 1;
    uint64_t behind = c->newest - i;
    if (behind >= c->window) return 0;
    return !(c->bits[behind / 64] >> (behind % 64) & 1);
}

static void replay_add(tutti_srtp_gcm *c, uint64_t i) {
    if (!c->seen || i > c->newest) {
        uint64_t shift = c->seen ? i - c->newest : c->window;
        uint32_t words = c->window / 64;
        if (shift >= c->window) {
            memset(c->bits, 0, words * sizeof(uint64_t));
        } else {
            /* Move every bit `shift` places further behind (towards higher positions). */
            uint32_t w = (uint32_t)(shift / 64), b = (uint32_t)(shift % 64);
            for (int k = (int)words - 1; k >= 0; k--) {
                uint64_t v = 0;
                if (k - (int)w >= 0) v = c->bits[k - w] << b;
                if (b && k - (int)w - 1 >= 0) v |= c->bits[k - w - 1] >> (64 - b);
                c->bits[k] = v;
            }
        }
        c->newest = i;
        c->seen = 1;
        c->bits[0] |= 1;
    } else {
        uint64_t behind = c->newest - i;
        c->bits[behind / 64] |= (uint64_t)1 << (behind % 64);
    }
}

int tutti_srtp_gcm_unprotect(tutti_srtp_gcm *c, uint8_t *p, int length) {
    int h = header_length(p, length, c->ssrc);
    if (h < 0 || length < h + 16) return -1;
    uint16_t seq = (uint16_t)(p[2] << 8 | p[3]);
    /* RFC 3711 §3.3.1: the roll-over counter this packet most likely belongs to. */
    uint32_t roc = c->roc;
    if (c->seen) {
        if (c->highest < 0x8000) {
            if (seq > c->highest + 0x8000 && roc > 0) roc = c->roc - 1;
        } else if (seq < c->highest - 0x8000) {
            roc = c->roc + 1;
        }
    }
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
    }
    return length - 16;
}
