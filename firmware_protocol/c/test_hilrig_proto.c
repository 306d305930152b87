/*
 * Host tests of hilrig_proto.h (the C reference of firmware_protocol/SPEC.md).
 *
 * Built and run by tests/firmware_protocol/test_c_reference.py with
 *   gcc -std=c99 -Wall -Wextra -Werror -pedantic [-fsanitize=address,undefined]
 *
 * Modes:
 *   test_hilrig_proto selftest
 *       unit tests that need no files: CRC, little-endian access, COBS (the published
 *       table of shared/reference/test-vectors.md, round trips, exact-size buffers),
 *       frame checks, the receiver's error handling and counters, payloads, seq.
 *   test_hilrig_proto vectors DIR
 *       the shared vectors DIR/cobs.txt, DIR/crc.txt, DIR/frames.txt byte for byte,
 *       plus streaming tests over all frames.txt frames.
 *   test_hilrig_proto encode MSG_TYPE FLAGS SEQ FIRST_SAMPLE N_SAMPLES PAYLOAD_HEX
 *       print the wire bytes of one frame as lowercase hex ("-" or "" = no payload).
 *   test_hilrig_proto encode-batch
 *       the same for each stdin line "MSG_TYPE FLAGS SEQ FIRST_SAMPLE N_SAMPLES HEX|-".
 *   test_hilrig_proto decode-batch
 *       for each stdin line of wire hex, feed it to a fresh receiver and print
 *       "frame TYPE FLAGS SEQ FIRST N_SAMPLES HEX|-" per frame that also passes
 *       hilrig_check_message, then
 *       "stats FRAMES CRC COBS OVERSIZE LENGTH VERSION UNKNOWN_TYPE BAD_PAYLOAD"
 *       (FRAMES counts every frame that passed the frame-level checks).
 * Exit status 0 when every check passed.
 */
#include "hilrig_proto.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long g_checks = 0;
static unsigned long g_failures = 0;

#define CHECK(cond, ...)                                                                   \
    do {                                                                                   \
        g_checks++;                                                                        \
        if (!(cond)) {                                                                     \
            g_failures++;                                                                  \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                \
            fprintf(stderr, __VA_ARGS__);                                                  \
            fputc('\n', stderr);                                                           \
        }                                                                                  \
    } while (0)

/* ---------------------------------------------------------------------------------- */
/* helpers                                                                            */
/* ---------------------------------------------------------------------------------- */

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Parse hex (whitespace ignored) into out[0, cap). Returns 0 on success. */
static int parse_hex(const char *s, uint8_t *out, size_t cap, size_t *n)
{
    size_t k = 0;
    int hi = -1;
    for (; *s; s++) {
        int v;
        if (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n') continue;
        v = hexval((unsigned char)*s);
        if (v < 0) return -1;
        if (hi < 0) {
            hi = v;
        } else {
            if (k >= cap) return -1;
            out[k++] = (uint8_t)(hi * 16 + v);
            hi = -1;
        }
    }
    if (hi >= 0) return -1;
    *n = k;
    return 0;
}

static void print_hex(FILE *f, const uint8_t *p, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) fprintf(f, "%02x", p[i]);
}

/* Parse a decimal (or 0x-hex) unsigned integer no larger than max. */
static int parse_uint(const char *s, unsigned long long max, unsigned long long *v)
{
    char *end;
    int base = 10;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) base = 16;
    if (*s == '\0' || *s == '-') return -1;
    errno = 0;
    *v = strtoull(s, &end, base);
    if (errno != 0 || *end != '\0' || *v > max) return -1;
    return 0;
}

/* Remove a trailing newline / carriage return in place. */
static void chomp(char *s)
{
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r')) s[--n] = '\0';
}

/* Split s at '|' into at most max fields (in place). Returns the number of fields. */
static int split_fields(char *s, char **fields, int max)
{
    int n = 0;
    fields[n++] = s;
    for (; *s; s++) {
        if (*s == '|') {
            *s = '\0';
            if (n >= max) return -1;
            fields[n++] = s + 1;
        }
    }
    return n;
}

/* Deterministic xorshift32 for the streaming tests. */
static uint32_t g_rng = 0x2545F491u;
static uint32_t rnd(void)
{
    uint32_t x = g_rng;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    g_rng = x;
    return x;
}

/* A growable byte buffer (test side only). */
typedef struct {
    uint8_t *p;
    size_t n, cap;
} bytes_t;

static void bytes_put(bytes_t *b, const uint8_t *data, size_t n)
{
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + n) cap *= 2;
        b->p = (uint8_t *)realloc(b->p, cap);
        if (!b->p) {
            perror("realloc");
            exit(2);
        }
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->n, data, n);
    b->n += n;
}

static void bytes_byte(bytes_t *b, uint8_t v) { bytes_put(b, &v, 1); }

/* Read one line of any length from f into *buf (grown as needed, NUL-terminated, newline
 * kept). Returns 0 at end of file. */
static int read_line(FILE *f, char **buf, size_t *cap)
{
    size_t n = 0;
    int c;
    while ((c = fgetc(f)) != EOF) {
        if (n + 2 > *cap) {
            *cap = *cap ? 2 * *cap : 4096;
            *buf = (char *)realloc(*buf, *cap);
            if (!*buf) {
                perror("realloc");
                exit(2);
            }
        }
        (*buf)[n++] = (char)c;
        if (c == '\n') break;
    }
    if (n == 0) return 0;
    (*buf)[n] = '\0';
    return 1;
}

/* Build an unstuffed frame with arbitrary version / payload_len, correct CRC. */
static size_t raw_frame(uint8_t *f, uint8_t version, uint8_t type, uint16_t payload_len_field,
                        const uint8_t *payload, size_t n)
{
    f[0] = version;
    f[1] = type;
    hilrig_put_u16(f + 2, 0);
    hilrig_put_u32(f + 4, 7);
    hilrig_put_u32(f + 8, 0);
    hilrig_put_u16(f + 12, 0);
    hilrig_put_u16(f + 14, payload_len_field);
    if (n) memcpy(f + 16, payload, n);
    hilrig_put_u32(f + 16 + n, hilrig_crc32(0, f, 16 + n));
    return 20 + n;
}

/* COBS-stuff an unstuffed frame and append it with its delimiter. */
static void put_stuffed(bytes_t *b, const uint8_t *f, size_t n)
{
    uint8_t tmp[2 * HILRIG_MAX_WIRE];
    size_t k = hilrig_cobs_encode(f, n, tmp, sizeof tmp);
    if (k == 0) {
        fprintf(stderr, "internal: cobs_encode failed\n");
        exit(2);
    }
    bytes_put(b, tmp, k);
    bytes_byte(b, 0);
}

/* ---------------------------------------------------------------------------------- */
/* self tests                                                                         */
/* ---------------------------------------------------------------------------------- */

static void test_crc(void)
{
    const uint8_t *check = (const uint8_t *)"123456789";
    const uint8_t *layout = (const uint8_t *)HILRIG_LAYOUT;
    uint32_t c;
    CHECK(hilrig_crc32(0, check, 9) == HILRIG_CRC32_CHECK, "got %08lx",
          (unsigned long)hilrig_crc32(0, check, 9));
    CHECK(hilrig_crc32(0, NULL, 0) == 0u, "empty");
    c = hilrig_crc32(0, check, 4);
    c = hilrig_crc32(c, check + 4, 5);
    CHECK(c == HILRIG_CRC32_CHECK, "chained %08lx", (unsigned long)c);
    CHECK(hilrig_crc32(0, layout, strlen(HILRIG_LAYOUT)) == HILRIG_LAYOUT_HASH,
          "layout hash %08lx", (unsigned long)hilrig_crc32(0, layout, strlen(HILRIG_LAYOUT)));
}

static void test_le(void)
{
    uint8_t b[8];
    static const uint8_t u64le[8] = {0xEF, 0xCD, 0xAB, 0x89, 0x67, 0x45, 0x23, 0x01};
    hilrig_put_u16(b, 0x1234u);
    CHECK(b[0] == 0x34 && b[1] == 0x12, "u16");
    CHECK(hilrig_get_u16(b) == 0x1234u, "u16 back");
    hilrig_put_u32(b, 0x12345678UL);
    CHECK(b[0] == 0x78 && b[1] == 0x56 && b[2] == 0x34 && b[3] == 0x12, "u32");
    CHECK(hilrig_get_u32(b) == 0x12345678UL, "u32 back");
    hilrig_put_u64(b, 0x0123456789ABCDEFULL);
    CHECK(memcmp(b, u64le, 8) == 0, "u64");
    CHECK(hilrig_get_u64(b) == 0x0123456789ABCDEFULL, "u64 back");
    hilrig_put_i32(b, -1);
    CHECK(b[0] == 0xFF && b[1] == 0xFF && b[2] == 0xFF && b[3] == 0xFF, "i32 -1");
    CHECK(hilrig_get_i32(b) == -1, "i32 -1 back");
    hilrig_put_i32(b, INT32_MIN);
    CHECK(b[0] == 0 && b[1] == 0 && b[2] == 0 && b[3] == 0x80, "i32 min");
    CHECK(hilrig_get_i32(b) == INT32_MIN, "i32 min back");
    hilrig_put_i32(b, INT32_MAX);
    CHECK(hilrig_get_i32(b) == INT32_MAX, "i32 max back");
    hilrig_put_i32(b, -1000);
    CHECK(b[0] == 0x18 && b[1] == 0xFC && b[2] == 0xFF && b[3] == 0xFF, "i32 -1000");
    CHECK(hilrig_get_i32(b) == -1000, "i32 -1000 back");
}

/* Encode in into a buffer of exactly cap bytes (heap, so ASan sees overruns). */
static size_t encode_exact(const uint8_t *in, size_t n, size_t cap, uint8_t *copy_out)
{
    uint8_t *buf = (uint8_t *)malloc(cap ? cap : 1);
    size_t k;
    if (!buf) exit(2);
    k = hilrig_cobs_encode(in, n, buf, cap);
    if (k && copy_out) memcpy(copy_out, buf, k);
    free(buf);
    return k;
}

static void check_cobs_pair(const uint8_t *raw, size_t n, const uint8_t *wire, size_t wn,
                            const char *what)
{
    uint8_t enc[2 * HILRIG_MAX_WIRE];
    uint8_t dec[2 * HILRIG_MAX_WIRE];
    size_t k, dn = 0;
    int rc;
    k = hilrig_cobs_encode(raw, n, enc, sizeof enc);
    CHECK(k + 1 == wn && memcmp(enc, wire, k) == 0 && wire[wn - 1] == 0,
          "%s: encode mismatch (len %lu vs wire %lu)", what, (unsigned long)k,
          (unsigned long)wn);
    CHECK(encode_exact(raw, n, wn - 1, NULL) == wn - 1, "%s: exact cap", what);
    CHECK(encode_exact(raw, n, wn - 2, NULL) == 0, "%s: cap - 1 must fail", what);
    rc = hilrig_cobs_decode(wire, wn - 1, dec, sizeof dec, &dn);
    CHECK(rc == HILRIG_OK && dn == n && (n == 0 || memcmp(dec, raw, n) == 0),
          "%s: decode (rc %d, len %lu)", what, rc, (unsigned long)dn);
}

static void test_cobs_published(void)
{
    /* shared/reference/test-vectors.md, rows 1-6 and the empty payload */
    static const struct {
        const char *raw, *wire;
    } rows[] = {
        {"00", "010100"},           {"0000", "01010100"},
        {"001100", "0102110100"},   {"11220033", "031122023300"},
        {"11223344", "051122334400"}, {"11000000", "021101010100"},
        {"", "0100"},
    };
    static const char *rejects[] = {"00", "05313233", "0531320034"};
    uint8_t raw[300], wire[300];
    size_t i, n, wn, dn;
    for (i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        if (parse_hex(rows[i].raw, raw, sizeof raw, &n) || parse_hex(rows[i].wire, wire, sizeof wire, &wn)) {
            CHECK(0, "bad hex in row %lu", (unsigned long)i);
            continue;
        }
        check_cobs_pair(raw, n, wire, wn, rows[i].wire);
    }
    /* rows 7-11: 254/255-byte sequences */
    for (i = 0; i < 254; i++) raw[i] = (uint8_t)(i + 1); /* 01..FE */
    wire[0] = 0xFF;
    memcpy(wire + 1, raw, 254);
    wire[255] = 0;
    check_cobs_pair(raw, 254, wire, 256, "row 7");
    for (i = 0; i < 255; i++) raw[i] = (uint8_t)i; /* 00..FE */
    wire[0] = 0x01;
    wire[1] = 0xFF;
    memcpy(wire + 2, raw + 1, 254);
    wire[256] = 0;
    check_cobs_pair(raw, 255, wire, 257, "row 8");
    for (i = 0; i < 255; i++) raw[i] = (uint8_t)(i + 1); /* 01..FF */
    wire[0] = 0xFF;
    memcpy(wire + 1, raw, 254);
    wire[255] = 0x02;
    wire[256] = 0xFF;
    wire[257] = 0;
    check_cobs_pair(raw, 255, wire, 258, "row 9");
    for (i = 0; i < 254; i++) raw[i] = (uint8_t)(i + 2); /* 02..FF 00 */
    raw[254] = 0;
    wire[0] = 0xFF;
    memcpy(wire + 1, raw, 254);
    wire[255] = 0x01;
    wire[256] = 0x01;
    wire[257] = 0;
    check_cobs_pair(raw, 255, wire, 258, "row 10");
    for (i = 0; i < 253; i++) raw[i] = (uint8_t)(i + 3); /* 03..FF 00 01 */
    raw[253] = 0;
    raw[254] = 1;
    wire[0] = 0xFE;
    memcpy(wire + 1, raw, 253);
    wire[254] = 0x02;
    wire[255] = 0x01;
    wire[256] = 0;
    check_cobs_pair(raw, 255, wire, 257, "row 11");

    /* the non-canonical form of row 7 (extra 01) decodes to the same 254 bytes */
    for (i = 0; i < 254; i++) raw[i] = (uint8_t)(i + 1);
    wire[0] = 0xFF;
    memcpy(wire + 1, raw, 254);
    wire[255] = 0x01;
    {
        uint8_t dec[300];
        int rc = hilrig_cobs_decode(wire, 256, dec, sizeof dec, &dn);
        CHECK(rc == HILRIG_OK && dn == 254 && memcmp(dec, raw, 254) == 0,
              "non-canonical row 7: rc %d len %lu", rc, (unsigned long)dn);
    }
    for (i = 0; i < sizeof rejects / sizeof rejects[0]; i++) {
        uint8_t dec[16];
        parse_hex(rejects[i], wire, sizeof wire, &wn);
        CHECK(hilrig_cobs_decode(wire, wn, dec, sizeof dec, &dn) == HILRIG_E_COBS,
              "reject %s", rejects[i]);
    }
    CHECK(hilrig_cobs_decode(wire, 0, raw, sizeof raw, &dn) == HILRIG_E_COBS, "empty input");
    /* decode into a too-small buffer */
    parse_hex("051122334400", wire, sizeof wire, &wn);
    CHECK(hilrig_cobs_decode(wire, wn - 1, raw, 3, &dn) == HILRIG_E_NOSPACE, "nospace");
}

static void test_cobs_roundtrip(void)
{
    static uint8_t raw[1200], enc[1300], dec[1300];
    size_t n, k, dn, i;
    int mode;
    for (mode = 0; mode < 4; mode++) {
        for (n = 0; n <= 1100; n += (n < 600 ? 1 : 7)) {
            for (i = 0; i < n; i++) {
                uint32_t r = rnd();
                switch (mode) {
                case 0: raw[i] = (uint8_t)r; break;                          /* random */
                case 1: raw[i] = (uint8_t)(r % 255u + 1u); break;            /* no zeros */
                case 2: raw[i] = (uint8_t)((r & 7u) ? 0u : (r >> 8)); break; /* mostly zeros */
                default: raw[i] = (uint8_t)((i % 254u == 253u) ? 0u : 0x55u); break;
                }
            }
            k = hilrig_cobs_encode(raw, n, enc, sizeof enc);
            CHECK(k >= 1 && k <= HILRIG_COBS_MAX_ENCODED(n), "mode %d n %lu: k %lu", mode,
                  (unsigned long)n, (unsigned long)k);
            CHECK(memchr(enc, 0, k) == NULL, "mode %d n %lu: zero in output", mode,
                  (unsigned long)n);
            /* canonical: never a lone trailing 01 right after a full FF block */
            if (k >= 256 && enc[k - 1] == 0x01) {
                size_t pos = 0, last = 0;
                while (pos < k) {
                    last = pos;
                    pos += enc[pos];
                }
                CHECK(!(k - last == 1 && last >= 255 && enc[last - 255] == 0xFF &&
                        (n == 0 || raw[n - 1] != 0)),
                      "mode %d n %lu: non-canonical tail", mode, (unsigned long)n);
            }
            CHECK(encode_exact(raw, n, k, NULL) == k, "exact cap n %lu", (unsigned long)n);
            CHECK(encode_exact(raw, n, k - 1, NULL) == 0, "cap-1 n %lu", (unsigned long)n);
            CHECK(hilrig_cobs_decode(enc, k, dec, sizeof dec, &dn) == HILRIG_OK && dn == n &&
                      (n == 0 || memcmp(dec, raw, n) == 0),
                  "mode %d n %lu: round trip", mode, (unsigned long)n);
            /* in place */
            memcpy(dec, enc, k);
            CHECK(hilrig_cobs_decode(dec, k, dec, sizeof dec, &dn) == HILRIG_OK && dn == n &&
                      (n == 0 || memcmp(dec, raw, n) == 0),
                  "mode %d n %lu: in place", mode, (unsigned long)n);
        }
    }
}

static void test_frame_encode_bounds(void)
{
    static uint8_t payload[HILRIG_MAX_PAYLOAD + 1];
    static uint8_t wire[2 * HILRIG_MAX_WIRE];
    size_t i, n, cap;
    hilrig_frame_t fr;
    hilrig_rx_t rx;
    int got = 0;
    for (i = 0; i < sizeof payload; i++) payload[i] = (uint8_t)(i % 255u + 1u);
    n = hilrig_encode_frame(wire, sizeof wire, HILRIG_MSG_SAMPLES, 0, 1, 0, 125, payload,
                            HILRIG_MAX_PAYLOAD);
    CHECK(n > 0 && n <= HILRIG_MAX_WIRE, "max frame: %lu", (unsigned long)n);
    CHECK(hilrig_encode_frame(wire, sizeof wire, HILRIG_MSG_SAMPLES, 0, 1, 0, 0, payload,
                              HILRIG_MAX_PAYLOAD + 1) == 0,
          "payload 1005 must be refused");
    /* the max-size frame survives the receiver */
    hilrig_rx_init(&rx);
    for (i = 0; i < n; i++) {
        if (hilrig_rx_push(&rx, wire[i], &fr) == HILRIG_RX_FRAME) {
            got++;
            CHECK(i == n - 1, "frame before its delimiter");
            CHECK(fr.payload_len == HILRIG_MAX_PAYLOAD &&
                      memcmp(fr.payload, payload, HILRIG_MAX_PAYLOAD) == 0,
                  "max payload");
        }
    }
    CHECK(got == 1 && rx.stats.oversize == 0, "max frame through receiver");
    /* every cap below the wire length fails without writing past it */
    for (cap = 0; cap <= 40; cap++) {
        uint8_t *buf = (uint8_t *)malloc(cap ? cap : 1);
        size_t k;
        if (!buf) exit(2);
        k = hilrig_encode_frame(buf, cap, HILRIG_MSG_PING, 0, 5, 0, 0, payload, 4);
        /* PING with a 4-byte non-zero payload: COBS adds code bytes for the zeros */
        if (cap < 24) CHECK(k == 0, "cap %lu must fail", (unsigned long)cap);
        free(buf);
    }
    {
        size_t need = hilrig_encode_frame(wire, sizeof wire, HILRIG_MSG_PING, 0, 5, 0, 0,
                                          payload, 4);
        uint8_t *buf = (uint8_t *)malloc(need);
        if (!buf) exit(2);
        CHECK(hilrig_encode_frame(buf, need, HILRIG_MSG_PING, 0, 5, 0, 0, payload, 4) == need,
              "exact cap");
        CHECK(hilrig_encode_frame(buf, need - 1, HILRIG_MSG_PING, 0, 5, 0, 0, payload, 4) == 0,
              "cap - 1");
        free(buf);
    }
    CHECK(hilrig_encode_frame(wire, sizeof wire, HILRIG_MSG_HELLO, 0, 0, 0, 0, NULL, 0) > 0,
          "NULL payload of length 0");
}

static void test_parse_frame(void)
{
    static uint8_t f[1100], p[1100];
    hilrig_frame_t fr;
    size_t n, i;
    for (i = 0; i < sizeof p; i++) p[i] = (uint8_t)i;
    CHECK(hilrig_parse_frame(f, 0, &fr) == HILRIG_E_LENGTH, "empty");
    n = raw_frame(f, 1, HILRIG_MSG_PING, 4, p, 4);
    CHECK(hilrig_parse_frame(f, n, &fr) == HILRIG_OK && fr.seq == 7 && fr.payload_len == 4 &&
              fr.payload == f + 16,
          "good");
    n = raw_frame(f, 2, HILRIG_MSG_PING, 4, p, 4);
    CHECK(hilrig_parse_frame(f, n, &fr) == HILRIG_E_VERSION, "version 2");
    CHECK(hilrig_parse_frame(f, 1, &fr) == HILRIG_E_VERSION, "version 2, 1 byte");
    f[0] = 0;
    CHECK(hilrig_parse_frame(f, 3, &fr) == HILRIG_E_VERSION, "version 0");
    n = raw_frame(f, 1, HILRIG_MSG_PING, 4, p, 4);
    CHECK(hilrig_parse_frame(f, 19, &fr) == HILRIG_E_LENGTH, "19 bytes");
    f[17] ^= 0x40u;
    CHECK(hilrig_parse_frame(f, n, &fr) == HILRIG_E_CRC, "bit flip");
    n = raw_frame(f, 1, HILRIG_MSG_PING, 5, p, 4);
    CHECK(hilrig_parse_frame(f, n, &fr) == HILRIG_E_LENGTH, "payload_len 5 for 4 bytes");
    n = raw_frame(f, 1, HILRIG_MSG_PING, 3, p, 4);
    CHECK(hilrig_parse_frame(f, n, &fr) == HILRIG_E_LENGTH, "payload_len 3 for 4 bytes");
    n = raw_frame(f, 1, HILRIG_MSG_SAMPLES, 1005, p, 1005);
    CHECK(n == 1025 && hilrig_parse_frame(f, n, &fr) == HILRIG_E_LENGTH, "1025 bytes");
    n = raw_frame(f, 1, HILRIG_MSG_SAMPLES, 1004, p, 1004);
    CHECK(n == 1024 && hilrig_parse_frame(f, n, &fr) == HILRIG_OK, "1024 bytes");
}

static void test_check_message(void)
{
    hilrig_frame_t fr;
    memset(&fr, 0, sizeof fr);
    fr.version_major = 1;
#define EXPECT_MSG(type, plen, ns, want)                                                 \
    do {                                                                               \
        fr.msg_type = (uint8_t)(type);                                                 \
        fr.payload_len = (uint16_t)(plen);                                             \
        fr.n_samples = (uint16_t)(ns);                                                 \
        CHECK(hilrig_check_message(&fr) == (want), "type %02x len %d n %d", (type),     \
              (int)(plen), (int)(ns));                                                 \
    } while (0)
    EXPECT_MSG(HILRIG_MSG_HELLO, 0, 0, HILRIG_OK);
    EXPECT_MSG(HILRIG_MSG_HELLO, 1, 0, HILRIG_E_BAD_PAYLOAD);
    EXPECT_MSG(HILRIG_MSG_START, 4, 0, HILRIG_OK);
    EXPECT_MSG(HILRIG_MSG_START, 0, 0, HILRIG_E_BAD_PAYLOAD);
    EXPECT_MSG(HILRIG_MSG_STOP, 0, 0, HILRIG_OK);
    EXPECT_MSG(HILRIG_MSG_ZERO, 4, 0, HILRIG_E_BAD_PAYLOAD);
    EXPECT_MSG(HILRIG_MSG_PING, 4, 0, HILRIG_OK);
    EXPECT_MSG(HILRIG_MSG_PING, 8, 0, HILRIG_E_BAD_PAYLOAD);
    EXPECT_MSG(HILRIG_MSG_RELEASE, 4, 0, HILRIG_OK);
    EXPECT_MSG(HILRIG_MSG_RELEASE, 0, 0, HILRIG_E_BAD_PAYLOAD);
    EXPECT_MSG(HILRIG_MSG_RELEASE, 2, 0, HILRIG_E_BAD_PAYLOAD);
    EXPECT_MSG(HILRIG_MSG_INFO, 43, 0, HILRIG_E_BAD_PAYLOAD);
    EXPECT_MSG(HILRIG_MSG_INFO, 44, 0, HILRIG_OK);
    EXPECT_MSG(HILRIG_MSG_INFO, 108, 0, HILRIG_OK);
    EXPECT_MSG(HILRIG_MSG_INFO, 109, 0, HILRIG_E_BAD_PAYLOAD);
    EXPECT_MSG(HILRIG_MSG_SAMPLES, 80, 10, HILRIG_OK);
    EXPECT_MSG(HILRIG_MSG_SAMPLES, 80, 9, HILRIG_E_BAD_PAYLOAD);
    EXPECT_MSG(HILRIG_MSG_SAMPLES, 1000, 125, HILRIG_OK);
    EXPECT_MSG(HILRIG_MSG_STATUS, 32, 0, HILRIG_OK);
    EXPECT_MSG(HILRIG_MSG_STATUS, 31, 0, HILRIG_E_BAD_PAYLOAD);
    EXPECT_MSG(HILRIG_MSG_ACK, 12, 0, HILRIG_OK);
    EXPECT_MSG(HILRIG_MSG_NAK, 12, 0, HILRIG_OK);
    EXPECT_MSG(HILRIG_MSG_NAK, 8, 0, HILRIG_E_BAD_PAYLOAD);
    EXPECT_MSG(0x00, 0, 0, HILRIG_E_UNKNOWN_TYPE);
    EXPECT_MSG(0x07, 0, 0, HILRIG_E_UNKNOWN_TYPE);
    EXPECT_MSG(0x80, 0, 0, HILRIG_E_UNKNOWN_TYPE);
    EXPECT_MSG(0x86, 12, 0, HILRIG_E_UNKNOWN_TYPE);
    EXPECT_MSG(0xFF, 0, 0, HILRIG_E_UNKNOWN_TYPE);
#undef EXPECT_MSG
}

/* Feed bytes one by one; record returned frames' seqs into seqs (up to max). */
static int feed_all(hilrig_rx_t *rx, const uint8_t *p, size_t n, uint32_t *seqs, int max)
{
    hilrig_frame_t fr;
    int got = 0;
    size_t i;
    for (i = 0; i < n; i++) {
        if (hilrig_rx_push(rx, p[i], &fr) == HILRIG_RX_FRAME) {
            if (got < max) seqs[got] = fr.seq;
            got++;
        }
    }
    return got;
}

static void test_receiver_errors(void)
{
    static uint8_t f[1100], p[1100];
    bytes_t s = {NULL, 0, 0};
    hilrig_rx_t rx;
    uint32_t seqs[8];
    uint8_t wire[HILRIG_MAX_WIRE];
    size_t n, i;
    int got;
    for (i = 0; i < sizeof p; i++) p[i] = (uint8_t)(i * 7u + 1u);

    /* A: a good PING, seq 7 */
    n = raw_frame(f, 1, HILRIG_MSG_PING, 4, p, 4);
    put_stuffed(&s, f, n);
    bytes_byte(&s, 0); /* extra delimiters: skipped */
    bytes_byte(&s, 0);
    /* CRC error */
    f[18] ^= 0x01u;
    put_stuffed(&s, f, n);
    /* unknown version (with a valid CRC) */
    n = raw_frame(f, 2, HILRIG_MSG_PING, 4, p, 4);
    put_stuffed(&s, f, n);
    /* length error: payload_len disagrees, CRC valid */
    n = raw_frame(f, 1, HILRIG_MSG_PING, 9, p, 4);
    put_stuffed(&s, f, n);
    /* length error: the decoded frame is empty (01 00) */
    bytes_byte(&s, 0x01);
    bytes_byte(&s, 0x00);
    /* oversize: 1025 unstuffed bytes (fit in 1030 COBS bytes) */
    n = raw_frame(f, 1, HILRIG_MSG_SAMPLES, 1005, p, 1005);
    put_stuffed(&s, f, n);
    /* COBS error: a code running past the end */
    bytes_put(&s, (const uint8_t *)"\x05\x31\x32\x33", 4);
    bytes_byte(&s, 0);
    /* oversize: 1031 non-zero bytes, then more, then 00 */
    for (i = 0; i < 1500; i++) bytes_byte(&s, (uint8_t)(i % 200u + 1u));
    bytes_byte(&s, 0);
    /* B: a good frame right after the oversize junk */
    n = hilrig_encode_frame(wire, sizeof wire, HILRIG_MSG_ACK, 0, 99, 0, 0, p, 12);
    bytes_put(&s, wire, n);

    hilrig_rx_init(&rx);
    got = feed_all(&rx, s.p, s.n, seqs, 8);
    CHECK(got == 2 && seqs[0] == 7 && seqs[1] == 99, "frames: got %d", got);
    CHECK(rx.stats.frames == 2, "frames %lu", (unsigned long)rx.stats.frames);
    CHECK(rx.stats.crc_errors == 1, "crc %lu", (unsigned long)rx.stats.crc_errors);
    CHECK(rx.stats.unknown_version == 1, "version %lu", (unsigned long)rx.stats.unknown_version);
    CHECK(rx.stats.length_errors == 2, "length %lu", (unsigned long)rx.stats.length_errors);
    CHECK(rx.stats.cobs_errors == 1, "cobs %lu", (unsigned long)rx.stats.cobs_errors);
    CHECK(rx.stats.oversize == 2, "oversize %lu", (unsigned long)rx.stats.oversize);
    CHECK(rx.len == 0 && !rx.discarding, "idle at the end");

    /* the oversize threshold: 1030 buffered bytes are fine, the 1031st is not */
    hilrig_rx_init(&rx);
    for (i = 0; i < HILRIG_RX_LIMIT; i++) hilrig_rx_push(&rx, 0x01, NULL);
    CHECK(rx.stats.oversize == 0 && rx.len == HILRIG_RX_LIMIT, "1030 bytes buffered");
    CHECK(hilrig_rx_push(&rx, 0x01, NULL) == HILRIG_E_OVERSIZE && rx.stats.oversize == 1,
          "1031st byte");
    CHECK(hilrig_rx_push(&rx, 0x01, NULL) == HILRIG_RX_NONE && rx.stats.oversize == 1,
          "discarding counts once");
    {
        hilrig_frame_t fr;
        CHECK(hilrig_rx_push(&rx, 0x00, &fr) == HILRIG_RX_NONE, "resync delimiter");
        CHECK(feed_all(&rx, wire, n, seqs, 8) == 1 && seqs[0] == 99, "frame after resync");
    }
    /* 1030 bytes then 00 are decoded, not discarded; 1030 x 01 unstuffs to 1029 bytes,
     * which is more than MAX_FRAME: oversize at the delimiter */
    hilrig_rx_init(&rx);
    for (i = 0; i < HILRIG_RX_LIMIT; i++) hilrig_rx_push(&rx, 0x01, NULL);
    {
        hilrig_frame_t fr;
        int rc = hilrig_rx_push(&rx, 0x00, &fr);
        CHECK(rc == HILRIG_E_OVERSIZE && rx.stats.oversize == 1 && !rx.discarding,
              "1030 x 01: rc %d", rc);
        /* 21 x 01: unstuffs to 20 zero bytes: version 0 */
        for (i = 0; i < 21; i++) hilrig_rx_push(&rx, 0x01, NULL);
        rc = hilrig_rx_push(&rx, 0x00, &fr);
        CHECK(rc == HILRIG_E_VERSION && rx.stats.unknown_version == 1, "21 x 01: rc %d", rc);
    }

    /* unknown type / bad payload counting and seq tracking */
    {
        hilrig_frame_t fr;
        memset(&fr, 0, sizeof fr);
        hilrig_rx_init(&rx);
        fr.msg_type = 0x42;
        CHECK(hilrig_rx_check_message(&rx, &fr) == HILRIG_E_UNKNOWN_TYPE &&
                  rx.stats.unknown_type == 1,
              "unknown type counted");
        fr.msg_type = HILRIG_MSG_PING;
        fr.payload_len = 3;
        CHECK(hilrig_rx_check_message(&rx, &fr) == HILRIG_E_BAD_PAYLOAD &&
                  rx.stats.bad_payload == 1,
              "bad payload counted");
        fr.payload_len = 4;
        CHECK(hilrig_rx_check_message(&rx, &fr) == HILRIG_OK, "ok message");
    }
    hilrig_rx_init(&rx);
    CHECK(hilrig_rx_track_seq(&rx, 0) == 0, "first seq");
    CHECK(hilrig_rx_track_seq(&rx, 1) == 0, "+1");
    CHECK(hilrig_rx_track_seq(&rx, 4) == 2, "+3 loses 2");
    CHECK(hilrig_rx_track_seq(&rx, 4) == 0, "repeat");
    CHECK(hilrig_rx_track_seq(&rx, 2) == 0, "backwards");
    CHECK(hilrig_rx_track_seq(&rx, 3) == 0, "+1 after restart");
    hilrig_rx_reset_seq(&rx);
    CHECK(hilrig_rx_track_seq(&rx, 0xFFFFFFFEUL) == 0, "after reset");
    CHECK(hilrig_rx_track_seq(&rx, 0xFFFFFFFFUL) == 0, "+1");
    CHECK(hilrig_rx_track_seq(&rx, 1) == 1, "wrap, lose 1");
    CHECK(rx.stats.lost_frames == 3, "lost %lu", (unsigned long)rx.stats.lost_frames);
    free(s.p);
}

static void test_payloads(void)
{
    uint8_t p[HILRIG_INFO_MAX_SIZE + 8];
    static const uint8_t id[] = "hilrig-test/1";
    hilrig_info_t info, back;
    hilrig_status_t st, st2;
    hilrig_reply_t r;
    int32_t counts[6] = {0, -1, INT32_MAX, INT32_MIN, 123456, -654321};
    int32_t a, b;
    uint32_t v;
    size_t n, i;

    memset(&info, 0, sizeof info);
    info.proto_major = 1;
    info.proto_minor = 0;
    info.capabilities = 0;
    info.sample_rate_hz = 10000;
    info.counts_per_rev_0 = 40000;
    info.counts_per_rev_1 = 40000;
    info.layout_hash = HILRIG_LAYOUT_HASH;
    info.boot_id = 0x0123456789ABCDEFULL;
    info.max_samples_per_frame = 10;
    info.device_us_at_boot = 0;
    info.firmware_id = id;
    info.firmware_id_len = sizeof id - 1;
    memset(p, 0xAA, sizeof p);
    n = hilrig_build_info(p, sizeof p, &info);
    CHECK(n == 44 + sizeof id - 1, "info len %lu", (unsigned long)n);
    CHECK(p[0] == 1 && p[1] == 0 && p[2] == 0 && p[3] == 0, "info head");
    CHECK(p[4] == 0x10 && p[5] == 0x27 && p[6] == 0 && p[7] == 0, "rate 10000 LE");
    CHECK(p[16] == 0x00 && p[17] == 0xE6 && p[18] == 0xF9 && p[19] == 0x57, "layout hash LE");
    CHECK(p[20] == 0xEF && p[27] == 0x01, "boot_id LE");
    for (i = 30; i < 32; i++) CHECK(p[i] == 0, "reserved %lu", (unsigned long)i);
    for (i = 36; i < 44; i++) CHECK(p[i] == 0, "reserved %lu", (unsigned long)i);
    CHECK(hilrig_parse_info(p, n, &back) == HILRIG_OK && back.boot_id == info.boot_id &&
              back.sample_rate_hz == 10000 && back.max_samples_per_frame == 10 &&
              back.firmware_id_len == sizeof id - 1 &&
              memcmp(back.firmware_id, id, sizeof id - 1) == 0,
          "info round trip");
    CHECK(back.proto_minor == 0 && back.capabilities == 0, "1.0 info: no capabilities");
    /* 1.1: capabilities at offset 2, sent and parsed as given (unknown bits included) */
    info.proto_minor = (uint8_t)HILRIG_VERSION_MINOR;
    info.capabilities = HILRIG_CAP_RELEASE_OUTPUT;
    n = hilrig_build_info(p, sizeof p, &info);
    CHECK(p[1] == 1 && p[2] == 0x01 && p[3] == 0x00, "info 1.1 head");
    CHECK(hilrig_parse_info(p, n, &back) == HILRIG_OK && back.proto_minor == 1 &&
              back.capabilities == HILRIG_CAP_RELEASE_OUTPUT,
          "info capabilities round trip");
    info.capabilities = 0x8001u;
    n = hilrig_build_info(p, sizeof p, &info);
    CHECK(p[2] == 0x01 && p[3] == 0x80 && hilrig_parse_info(p, n, &back) == HILRIG_OK &&
              back.capabilities == 0x8001u &&
              (back.capabilities & HILRIG_CAP_RELEASE_OUTPUT) != 0u,
          "reserved capability bits");
    CHECK(hilrig_build_info(p, n - 1, &info) == 0, "info cap");
    info.firmware_id_len = 65;
    CHECK(hilrig_build_info(p, sizeof p, &info) == 0, "info id > 64");
    CHECK(hilrig_parse_info(p, 43, &back) == HILRIG_E_BAD_PAYLOAD, "info short");

    st.device_us = 0x1122334455667788ULL;
    st.samples_taken = 1;
    st.frames_dropped = 2;
    st.samples_dropped = 3;
    st.overruns = 4;
    st.illegal_0 = 5;
    st.illegal_1 = 0xFFFFFFFFUL;
    CHECK(hilrig_build_status(p, &st) == 32, "status len");
    CHECK(p[0] == 0x88 && p[7] == 0x11 && p[8] == 1 && p[28] == 0xFF, "status LE");
    CHECK(hilrig_parse_status(p, 32, &st2) == HILRIG_OK && st2.device_us == st.device_us &&
              st2.illegal_0 == 5 && st2.illegal_1 == 0xFFFFFFFFUL,
          "status round trip");
    CHECK(hilrig_parse_status(p, 31, &st2) == HILRIG_E_BAD_PAYLOAD, "status short");

    memset(p, 0xAA, sizeof p);
    CHECK(hilrig_build_ack(p, 0x01020304UL, HILRIG_MSG_PING, 0xDEADBEEFUL) == 12, "ack");
    CHECK(p[0] == 4 && p[3] == 1 && p[4] == 5 && p[5] == 0 && p[6] == 0 && p[7] == 0 &&
              p[8] == 0xEF && p[11] == 0xDE,
          "ack bytes");
    CHECK(hilrig_parse_ack(p, 12, &r) == HILRIG_OK && r.acked_seq == 0x01020304UL &&
              r.acked_type == 5 && r.value == 0xDEADBEEFUL && r.reason == 0,
          "ack parse");
    memset(p, 0xAA, sizeof p);
    CHECK(hilrig_build_nak(p, 9, HILRIG_MSG_START, HILRIG_NAK_UNSUPPORTED_RATE, 123456) == 12,
          "nak");
    CHECK(p[4] == 2 && p[5] == 4 && p[6] == 0 && p[7] == 0, "nak bytes");
    CHECK(hilrig_parse_nak(p, 12, &r) == HILRIG_OK && r.reason == 4 && r.value == 123456,
          "nak parse");
    CHECK(hilrig_parse_ack(p, 11, &r) == HILRIG_E_BAD_PAYLOAD, "ack short");

    CHECK(hilrig_build_start(p, 10000) == 4 && hilrig_parse_u32(p, 4, &v) == HILRIG_OK &&
              v == 10000,
          "start");
    CHECK(hilrig_build_ping(p, 0xCAFEF00DUL) == 4 && p[0] == 0x0D && p[3] == 0xCA, "ping");
    CHECK(hilrig_build_release(p, 50) == 4 && p[0] == 50 && p[1] == 0 && p[2] == 0 &&
              p[3] == 0 && hilrig_parse_u32(p, 4, &v) == HILRIG_OK && v == 50,
          "release");
    CHECK(hilrig_parse_u32(p, 5, &v) == HILRIG_E_BAD_PAYLOAD, "u32 len");
    memset(p, 0xAA, sizeof p);
    CHECK(hilrig_build_nak(p, 5, HILRIG_MSG_RELEASE, HILRIG_NAK_NO_RELEASE_OUTPUT, 0) == 12 &&
              p[4] == 6 && p[5] == 5 && hilrig_parse_nak(p, 12, &r) == HILRIG_OK &&
              r.reason == HILRIG_NAK_NO_RELEASE_OUTPUT && r.acked_type == HILRIG_MSG_RELEASE,
          "nak no release output");

    n = hilrig_build_samples(p, sizeof p, counts, 3);
    CHECK(n == 24, "samples len");
    for (i = 0; i < 3; i++) {
        hilrig_get_sample(p, i, &a, &b);
        CHECK(a == counts[2 * i] && b == counts[2 * i + 1], "sample %lu", (unsigned long)i);
    }
    CHECK(p[8] == 0xFF && p[9] == 0xFF && p[10] == 0xFF && p[11] == 0x7F, "INT32_MAX LE");
    CHECK(hilrig_build_samples(p, 23, counts, 3) == 0, "samples cap");
    CHECK(hilrig_build_samples(p, 100000, counts, 126) == 0, "126 samples");
}

static int run_selftest(void)
{
    test_crc();
    test_le();
    test_cobs_published();
    test_cobs_roundtrip();
    test_frame_encode_bounds();
    test_parse_frame();
    test_check_message();
    test_receiver_errors();
    test_payloads();
    printf("selftest: %lu checks, %lu failures\n", g_checks, g_failures);
    return g_failures ? 1 : 0;
}

/* ---------------------------------------------------------------------------------- */
/* shared vectors                                                                     */
/* ---------------------------------------------------------------------------------- */

#define LINE_MAX_LEN 65536

static FILE *open_vec(const char *dir, const char *name)
{
    char path[4096];
    FILE *f;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "FAIL cannot open %s\n", path);
        g_failures++;
    }
    return f;
}

/* Read the next non-comment line into buf (chomped). Returns 0 at EOF. */
static int next_line(FILE *f, char *buf, size_t cap, unsigned long *lineno)
{
    while (fgets(buf, (int)cap, f)) {
        (*lineno)++;
        if (strlen(buf) == cap - 1 && buf[cap - 2] != '\n') {
            fprintf(stderr, "FAIL line %lu too long\n", *lineno);
            g_failures++;
            return 0;
        }
        chomp(buf);
        if (buf[0] == '#') continue;
        if (buf[0] == '\0') continue;
        return 1;
    }
    return 0;
}

static int vec_crc(const char *dir)
{
    static char line[LINE_MAX_LEN];
    unsigned long lineno = 0, count = 0;
    FILE *f = open_vec(dir, "crc.txt");
    if (!f) return 0;
    while (next_line(f, line, sizeof line, &lineno)) {
        char *bar = strrchr(line, '|');
        const char *h;
        unsigned long long want = 0;
        uint32_t got;
        size_t j, hn;
        if (!bar) {
            CHECK(0, "crc.txt:%lu: no '|'", lineno);
            continue;
        }
        h = bar + 1;
        if (h[0] == '0' && (h[1] == 'x' || h[1] == 'X')) h += 2;
        hn = strlen(h);
        if (hn == 0 || hn > 8) {
            CHECK(0, "crc.txt:%lu: bad crc field", lineno);
            continue;
        }
        for (j = 0; j < hn && hexval((unsigned char)h[j]) >= 0; j++) want = want * 16u + (unsigned)hexval((unsigned char)h[j]);
        if (j != hn) {
            CHECK(0, "crc.txt:%lu: bad crc field", lineno);
            continue;
        }
        *bar = '\0';
        got = hilrig_crc32(0, (const uint8_t *)line, strlen(line));
        CHECK(got == (uint32_t)want, "crc.txt:%lu: \"%s\": got %08lx want %08lx", lineno, line,
              (unsigned long)got, (unsigned long)want);
        if (strcmp(line, HILRIG_LAYOUT) == 0) {
            CHECK((uint32_t)want == HILRIG_LAYOUT_HASH, "HILRIG_LAYOUT_HASH disagrees with crc.txt");
        }
        count++;
    }
    fclose(f);
    CHECK(count >= 1, "crc.txt has no vectors");
    return (int)count;
}

static int vec_cobs(const char *dir)
{
    static char line[LINE_MAX_LEN];
    static uint8_t raw[LINE_MAX_LEN / 2], wire[LINE_MAX_LEN / 2], dec[LINE_MAX_LEN / 2];
    unsigned long lineno = 0;
    int count = 0, rejects = 0;
    FILE *f = open_vec(dir, "cobs.txt");
    if (!f) return 0;
    while (next_line(f, line, sizeof line, &lineno)) {
        char *fields[3];
        size_t n, wn, dn;
        if (split_fields(line, fields, 3) != 2) {
            CHECK(0, "cobs.txt:%lu: expected 2 fields", lineno);
            continue;
        }
        if (strcmp(fields[0], "reject") == 0) {
            if (parse_hex(fields[1], wire, sizeof wire, &wn)) {
                CHECK(0, "cobs.txt:%lu: bad hex", lineno);
                continue;
            }
            CHECK(hilrig_cobs_decode(wire, wn, dec, sizeof dec, &dn) == HILRIG_E_COBS,
                  "cobs.txt:%lu: reject %s was accepted", lineno, fields[1]);
            /* through the receiver too (when it contains no delimiter itself) */
            if (wn > 0 && memchr(wire, 0, wn) == NULL) {
                hilrig_rx_t rx;
                hilrig_frame_t fr;
                size_t i;
                int frames = 0;
                hilrig_rx_init(&rx);
                for (i = 0; i < wn; i++) frames += hilrig_rx_push(&rx, wire[i], &fr) == HILRIG_RX_FRAME;
                frames += hilrig_rx_push(&rx, 0, &fr) == HILRIG_RX_FRAME;
                CHECK(frames == 0 && rx.stats.cobs_errors == 1,
                      "cobs.txt:%lu: receiver on reject", lineno);
            }
            rejects++;
            continue;
        }
        if (parse_hex(fields[0], raw, sizeof raw, &n) || parse_hex(fields[1], wire, sizeof wire, &wn) ||
            wn < 2) {
            CHECK(0, "cobs.txt:%lu: bad hex", lineno);
            continue;
        }
        {
            char what[64];
            snprintf(what, sizeof what, "cobs.txt:%lu", lineno);
            check_cobs_pair(raw, n, wire, wn, what);
        }
        count++;
    }
    fclose(f);
    CHECK(count >= 12, "cobs.txt: only %d encode vectors", count);
    CHECK(rejects >= 3, "cobs.txt: only %d reject vectors", rejects);
    return count + rejects;
}

typedef struct {
    char name[64];
    uint8_t msg_type;
    uint16_t flags;
    uint32_t seq, first_sample;
    uint16_t n_samples;
    uint8_t *payload;
    size_t payload_len;
    uint8_t *wire;
    size_t wire_len;
} vframe_t;

static vframe_t g_frames[256];
static int g_nframes = 0;

/* Re-build a payload with the header's builders from its parsed fields; compare. */
static void check_payload_builders(const vframe_t *v)
{
    uint8_t p[HILRIG_MAX_PAYLOAD];
    size_t n = 0;
    int ok = 1;
    switch (v->msg_type) {
    case HILRIG_MSG_HELLO:
    case HILRIG_MSG_STOP:
    case HILRIG_MSG_ZERO:
        n = 0;
        break;
    case HILRIG_MSG_START:
    case HILRIG_MSG_PING:
    case HILRIG_MSG_RELEASE: {
        uint32_t x = 0;
        ok = hilrig_parse_u32(v->payload, v->payload_len, &x) == HILRIG_OK;
        n = v->msg_type == HILRIG_MSG_START  ? hilrig_build_start(p, x)
            : v->msg_type == HILRIG_MSG_PING ? hilrig_build_ping(p, x)
                                             : hilrig_build_release(p, x);
        break;
    }
    case HILRIG_MSG_INFO: {
        hilrig_info_t info;
        ok = hilrig_parse_info(v->payload, v->payload_len, &info) == HILRIG_OK;
        if (ok) n = hilrig_build_info(p, sizeof p, &info);
        if (ok) CHECK(info.layout_hash == HILRIG_LAYOUT_HASH && info.proto_major == 1,
                      "%s: layout hash / major", v->name);
        /* a 1.0 INFO has 0 there (reserved); no vector sets a bit this header lacks */
        if (ok) CHECK((info.proto_minor >= 1 || info.capabilities == 0) &&
                          (info.capabilities & ~HILRIG_CAPS_KNOWN) == 0,
                      "%s: minor %u capabilities %04x", v->name, (unsigned)info.proto_minor,
                      (unsigned)info.capabilities);
        break;
    }
    case HILRIG_MSG_SAMPLES: {
        size_t i;
        for (i = 0; i < v->n_samples && (i + 1) * 8 <= v->payload_len; i++) {
            int32_t a, b;
            hilrig_get_sample(v->payload, i, &a, &b);
            hilrig_put_sample(p, i, a, b);
        }
        n = (size_t)v->n_samples * 8u;
        break;
    }
    case HILRIG_MSG_STATUS: {
        hilrig_status_t st;
        ok = hilrig_parse_status(v->payload, v->payload_len, &st) == HILRIG_OK;
        if (ok) n = hilrig_build_status(p, &st);
        break;
    }
    case HILRIG_MSG_ACK: {
        hilrig_reply_t r;
        ok = hilrig_parse_ack(v->payload, v->payload_len, &r) == HILRIG_OK;
        if (ok) n = hilrig_build_ack(p, r.acked_seq, r.acked_type, r.value);
        break;
    }
    case HILRIG_MSG_NAK: {
        hilrig_reply_t r;
        ok = hilrig_parse_nak(v->payload, v->payload_len, &r) == HILRIG_OK;
        if (ok) n = hilrig_build_nak(p, r.acked_seq, r.acked_type, r.reason, r.value);
        if (ok) CHECK(r.reason >= HILRIG_NAK_UNKNOWN_TYPE &&
                          r.reason <= HILRIG_NAK_NO_RELEASE_OUTPUT,
                      "%s: NAK reason %u", v->name, (unsigned)r.reason);
        break;
    }
    default:
        return; /* a vector of an unknown type: nothing to rebuild */
    }
    CHECK(ok && n == v->payload_len && (n == 0 || memcmp(p, v->payload, n) == 0),
          "%s: payload rebuilt by the builders differs", v->name);
}

static int vec_frames(const char *dir)
{
    static char line[LINE_MAX_LEN];
    static uint8_t buf[LINE_MAX_LEN / 2];
    static uint8_t wire[2 * HILRIG_MAX_WIRE];
    unsigned long lineno = 0;
    FILE *f = open_vec(dir, "frames.txt");
    if (!f) return 0;
    while (next_line(f, line, sizeof line, &lineno)) {
        char *fl[9];
        unsigned long long t, fg, sq, fs, ns;
        size_t n, wn;
        vframe_t *v;
        if (split_fields(line, fl, 9) != 8) {
            CHECK(0, "frames.txt:%lu: expected 8 fields", lineno);
            continue;
        }
        if (g_nframes >= (int)(sizeof g_frames / sizeof g_frames[0])) {
            CHECK(0, "frames.txt: too many frames");
            break;
        }
        if (parse_uint(fl[1], 0xFF, &t) || parse_uint(fl[2], 0xFFFF, &fg) ||
            parse_uint(fl[3], 0xFFFFFFFFULL, &sq) || parse_uint(fl[4], 0xFFFFFFFFULL, &fs) ||
            parse_uint(fl[5], 0xFFFF, &ns)) {
            CHECK(0, "frames.txt:%lu: bad integer field", lineno);
            continue;
        }
        v = &g_frames[g_nframes];
        snprintf(v->name, sizeof v->name, "frames.txt:%lu %s", lineno, fl[0]);
        v->msg_type = (uint8_t)t;
        v->flags = (uint16_t)fg;
        v->seq = (uint32_t)sq;
        v->first_sample = (uint32_t)fs;
        v->n_samples = (uint16_t)ns;
        if (parse_hex(fl[6], buf, sizeof buf, &n)) {
            CHECK(0, "%s: bad payload hex", v->name);
            continue;
        }
        v->payload = (uint8_t *)malloc(n ? n : 1);
        if (!v->payload) exit(2);
        if (n) memcpy(v->payload, buf, n);
        v->payload_len = n;
        if (parse_hex(fl[7], buf, sizeof buf, &n)) {
            CHECK(0, "%s: bad wire hex", v->name);
            free(v->payload);
            continue;
        }
        v->wire = (uint8_t *)malloc(n ? n : 1);
        if (!v->wire) exit(2);
        if (n) memcpy(v->wire, buf, n);
        v->wire_len = n;
        g_nframes++;

        /* 1. C encode == wire, byte for byte */
        wn = hilrig_encode_frame(wire, sizeof wire, v->msg_type, v->flags, v->seq,
                                 v->first_sample, v->n_samples, v->payload, v->payload_len);
        CHECK(wn == v->wire_len && memcmp(wire, v->wire, wn) == 0,
              "%s: encode differs (len %lu vs %lu)", v->name, (unsigned long)wn,
              (unsigned long)v->wire_len);
        if (wn != v->wire_len || memcmp(wire, v->wire, wn) != 0) {
            fprintf(stderr, "  got  ");
            print_hex(stderr, wire, wn);
            fprintf(stderr, "\n  want ");
            print_hex(stderr, v->wire, v->wire_len);
            fprintf(stderr, "\n");
        }
        CHECK(v->wire_len <= HILRIG_MAX_WIRE, "%s: wire longer than HILRIG_MAX_WIRE", v->name);

        /* 2. decode of the wire (fresh receiver, byte by byte) == fields and payload */
        {
            hilrig_rx_t rx;
            hilrig_frame_t fr;
            size_t i;
            int frames = 0;
            hilrig_rx_init(&rx);
            memset(&fr, 0, sizeof fr);
            for (i = 0; i < v->wire_len; i++) {
                int rc = hilrig_rx_push(&rx, v->wire[i], &fr);
                if (rc == HILRIG_RX_FRAME) {
                    frames++;
                    CHECK(i == v->wire_len - 1, "%s: frame before the end", v->name);
                    CHECK(fr.version_major == 1 && fr.msg_type == v->msg_type &&
                              fr.flags == v->flags && fr.seq == v->seq &&
                              fr.first_sample == v->first_sample &&
                              fr.n_samples == v->n_samples && fr.payload_len == v->payload_len &&
                              (v->payload_len == 0 ||
                               memcmp(fr.payload, v->payload, v->payload_len) == 0),
                          "%s: decoded fields differ", v->name);
                    CHECK(hilrig_check_message(&fr) == HILRIG_OK, "%s: check_message %d",
                          v->name, hilrig_check_message(&fr));
                } else {
                    CHECK(rc == HILRIG_RX_NONE, "%s: receiver error %d", v->name, rc);
                }
            }
            CHECK(frames == 1, "%s: %d frames decoded", v->name, frames);
        }
        /* 3. the builders reproduce the payload */
        check_payload_builders(v);
    }
    fclose(f);
    CHECK(g_nframes >= 10, "frames.txt: only %d frames", g_nframes);
    /* every message type of SPEC 4 has at least one vector (1.1: RELEASE too) */
    {
        static const uint8_t types[] = {HILRIG_MSG_HELLO, HILRIG_MSG_START,   HILRIG_MSG_STOP,
                                        HILRIG_MSG_ZERO,  HILRIG_MSG_PING,    HILRIG_MSG_RELEASE,
                                        HILRIG_MSG_INFO,  HILRIG_MSG_SAMPLES, HILRIG_MSG_STATUS,
                                        HILRIG_MSG_ACK,   HILRIG_MSG_NAK};
        size_t t;
        int i, found;
        for (t = 0; t < sizeof types; t++) {
            for (found = 0, i = 0; i < g_nframes && !found; i++) {
                found = g_frames[i].msg_type == types[t];
            }
            CHECK(found, "frames.txt: no vector of type %02x", (unsigned)types[t]);
        }
    }
    return g_nframes;
}

/* Feed stream s in chunks of the given sizes (cycled); compare the frames with
 * g_frames in order. Returns the receiver stats. */
static hilrig_rx_stats_t stream_check(const bytes_t *s, const size_t *chunks, size_t nchunks,
                                      const char *what)
{
    hilrig_rx_t *rx = (hilrig_rx_t *)malloc(sizeof *rx);
    hilrig_rx_stats_t st;
    size_t pos = 0, ci = 0;
    int idx = 0;
    if (!rx) exit(2);
    hilrig_rx_init(rx);
    while (pos < s->n) {
        size_t len = chunks[ci++ % nchunks];
        const uint8_t *p;
        if (len > s->n - pos) len = s->n - pos;
        p = s->p + pos;
        pos += len;
        while (len > 0) {
            hilrig_frame_t fr;
            size_t used = 0;
            if (hilrig_rx_feed(rx, p, len, &used, &fr) == HILRIG_RX_FRAME) {
                if (idx < g_nframes) {
                    const vframe_t *v = &g_frames[idx];
                    CHECK(fr.msg_type == v->msg_type && fr.flags == v->flags &&
                              fr.seq == v->seq && fr.first_sample == v->first_sample &&
                              fr.n_samples == v->n_samples && fr.payload_len == v->payload_len &&
                              (v->payload_len == 0 ||
                               memcmp(fr.payload, v->payload, v->payload_len) == 0),
                          "%s: frame %d (%s) differs", what, idx, v->name);
                } else {
                    CHECK(0, "%s: extra frame (type %02x seq %lu)", what, fr.msg_type,
                          (unsigned long)fr.seq);
                }
                idx++;
            }
            CHECK(used >= 1 && used <= len, "%s: consumed %lu of %lu", what,
                  (unsigned long)used, (unsigned long)len);
            if (used == 0) break;
            p += used;
            len -= used;
        }
    }
    CHECK(idx == g_nframes, "%s: %d frames, want %d", what, idx, g_nframes);
    CHECK(rx->stats.frames == (uint32_t)g_nframes, "%s: stats.frames", what);
    st = rx->stats;
    free(rx);
    return st;
}

static void vec_streaming(void)
{
    static const size_t odd_chunks[] = {1, 3, 5, 7, 11, 13, 17, 31, 61, 127, 509, 1021, 2039};
    static const size_t one[] = {1};
    static const size_t big[] = {1 << 20};
    bytes_t clean = {NULL, 0, 0}, dirty = {NULL, 0, 0};
    int i, k;
    unsigned long garbage_segments = 0;
    hilrig_rx_stats_t st;
    if (g_nframes == 0) return;

    /* clean: all frames back to back, with 0x00 runs between them */
    for (i = 0; i < g_nframes; i++) {
        for (k = 0; k < i % 4; k++) bytes_byte(&clean, 0);
        bytes_put(&clean, g_frames[i].wire, g_frames[i].wire_len);
    }
    for (k = 0; k < 3; k++) bytes_byte(&clean, 0);
    st = stream_check(&clean, odd_chunks, sizeof odd_chunks / sizeof odd_chunks[0], "clean/odd");
    CHECK(st.crc_errors + st.cobs_errors + st.oversize + st.length_errors + st.unknown_version == 0,
          "clean stream counted errors");
    stream_check(&clean, one, 1, "clean/bytewise");
    stream_check(&clean, big, 1, "clean/whole");

    /* dirty: 0x00 runs, random garbage (each piece closed by a 0x00 so it cannot swallow
     * the next frame), corrupted copies of frames, oversize runs, between the frames */
    g_rng = 0x9E3779B9u;
    for (i = 0; i < g_nframes; i++) {
        int pieces = (int)(rnd() % 4u);
        for (k = 0; k < pieces; k++) {
            uint32_t kind = rnd() % 6u;
            size_t len, j;
            if (kind == 0) { /* a run of delimiters */
                len = 1 + rnd() % 5u;
                for (j = 0; j < len; j++) bytes_byte(&dirty, 0);
            } else if (kind <= 2) { /* random bytes (zeros included) */
                len = 1 + rnd() % 80u;
                for (j = 0; j < len; j++) bytes_byte(&dirty, (uint8_t)rnd());
                bytes_byte(&dirty, 0);
                garbage_segments++;
            } else if (kind <= 4) { /* a frame with one byte changed (not to/from 0x00) */
                const vframe_t *v = &g_frames[rnd() % (uint32_t)g_nframes];
                size_t at = rnd() % (v->wire_len - 1);
                uint8_t *copy = (uint8_t *)malloc(v->wire_len);
                if (!copy) exit(2);
                memcpy(copy, v->wire, v->wire_len);
                do {
                    copy[at] = (uint8_t)(copy[at] ^ (uint8_t)(1u << (rnd() % 8u)));
                } while (copy[at] == 0);
                bytes_put(&dirty, copy, v->wire_len);
                free(copy);
                garbage_segments++;
            } else { /* oversize: more than 1030 non-zero bytes */
                len = HILRIG_RX_LIMIT + 1 + rnd() % 600u;
                for (j = 0; j < len; j++) bytes_byte(&dirty, (uint8_t)(rnd() % 255u + 1u));
                bytes_byte(&dirty, 0);
                garbage_segments++;
            }
        }
        bytes_put(&dirty, g_frames[i].wire, g_frames[i].wire_len);
    }
    /* trailing garbage without a delimiter must not produce anything */
    bytes_put(&dirty, (const uint8_t *)"\x11\x22\x33", 3);
    st = stream_check(&dirty, odd_chunks, sizeof odd_chunks / sizeof odd_chunks[0], "dirty/odd");
    CHECK(garbage_segments > 0 && st.crc_errors + st.cobs_errors + st.oversize +
                                          st.length_errors + st.unknown_version >
                                      0,
          "dirty stream counted no errors");
    stream_check(&dirty, one, 1, "dirty/bytewise");
    printf("streaming: %d frames, %lu bytes clean, %lu bytes dirty (%lu garbage pieces: "
           "crc %lu cobs %lu oversize %lu length %lu version %lu)\n",
           g_nframes, (unsigned long)clean.n, (unsigned long)dirty.n, garbage_segments,
           (unsigned long)st.crc_errors, (unsigned long)st.cobs_errors,
           (unsigned long)st.oversize, (unsigned long)st.length_errors,
           (unsigned long)st.unknown_version);
    free(clean.p);
    free(dirty.p);
}

static int run_vectors(const char *dir)
{
    int ncrc = vec_crc(dir);
    int ncobs = vec_cobs(dir);
    int nframes = vec_frames(dir);
    int i;
    vec_streaming();
    printf("vectors: crc %d, cobs %d, frames %d; %lu checks, %lu failures\n", ncrc, ncobs,
           nframes, g_checks, g_failures);
    for (i = 0; i < g_nframes; i++) {
        free(g_frames[i].payload);
        free(g_frames[i].wire);
    }
    return g_failures ? 1 : 0;
}

/* ---------------------------------------------------------------------------------- */
/* command-line encode / decode (cross tests against the Python codec)                */
/* ---------------------------------------------------------------------------------- */

static int encode_fields(char **a, FILE *out)
{
    unsigned long long t, fg, sq, fs, ns;
    static uint8_t payload[4096];
    static uint8_t wire[2 * HILRIG_MAX_WIRE];
    size_t n = 0, wn;
    const char *hex = a[5];
    if (parse_uint(a[0], 0xFF, &t) || parse_uint(a[1], 0xFFFF, &fg) ||
        parse_uint(a[2], 0xFFFFFFFFULL, &sq) || parse_uint(a[3], 0xFFFFFFFFULL, &fs) ||
        parse_uint(a[4], 0xFFFF, &ns)) {
        fprintf(stderr, "bad integer argument\n");
        return 2;
    }
    if (strcmp(hex, "-") == 0) hex = "";
    if (parse_hex(hex, payload, sizeof payload, &n)) {
        fprintf(stderr, "bad payload hex\n");
        return 2;
    }
    wn = hilrig_encode_frame(wire, sizeof wire, (uint8_t)t, (uint16_t)fg, (uint32_t)sq,
                             (uint32_t)fs, (uint16_t)ns, payload, n);
    if (wn == 0) {
        fprintf(out, "error\n");
        return 1;
    }
    print_hex(out, wire, wn);
    fputc('\n', out);
    return 0;
}

static int encode_batch(void)
{
    char *line = NULL;
    size_t cap = 0;
    int rc = 0;
    while (read_line(stdin, &line, &cap)) {
        char *a[6];
        int n = 0;
        char *tok = strtok(line, " \t\r\n");
        while (tok && n < 6) {
            a[n++] = tok;
            tok = strtok(NULL, " \t\r\n");
        }
        if (n == 5) a[n++] = (char *)"-";
        if (n != 6) {
            fprintf(stderr, "bad batch line\n");
            free(line);
            return 2;
        }
        if (encode_fields(a, stdout) != 0) rc = 1;
    }
    free(line);
    return rc;
}

static int decode_batch(void)
{
    char *line = NULL;
    size_t cap = 0;
    uint8_t *wire = NULL;
    static hilrig_rx_t rx;
    while (read_line(stdin, &line, &cap)) {
        size_t n, i;
        wire = (uint8_t *)realloc(wire, cap);
        if (!wire) exit(2);
        if (parse_hex(line, wire, cap, &n)) {
            fprintf(stderr, "bad hex line\n");
            free(line);
            free(wire);
            return 2;
        }
        hilrig_rx_init(&rx);
        for (i = 0; i < n; i++) {
            hilrig_frame_t fr;
            if (hilrig_rx_push(&rx, wire[i], &fr) == HILRIG_RX_FRAME &&
                hilrig_rx_check_message(&rx, &fr) == HILRIG_OK) {
                printf("frame %u %u %lu %lu %u ", (unsigned)fr.msg_type, (unsigned)fr.flags,
                       (unsigned long)fr.seq, (unsigned long)fr.first_sample,
                       (unsigned)fr.n_samples);
                if (fr.payload_len) print_hex(stdout, fr.payload, fr.payload_len);
                else fputc('-', stdout);
                fputc('\n', stdout);
            }
        }
        printf("stats %lu %lu %lu %lu %lu %lu %lu %lu\n", (unsigned long)rx.stats.frames,
               (unsigned long)rx.stats.crc_errors, (unsigned long)rx.stats.cobs_errors,
               (unsigned long)rx.stats.oversize, (unsigned long)rx.stats.length_errors,
               (unsigned long)rx.stats.unknown_version, (unsigned long)rx.stats.unknown_type,
               (unsigned long)rx.stats.bad_payload);
    }
    free(line);
    free(wire);
    return 0;
}

static int usage(void)
{
    fprintf(stderr,
            "usage: test_hilrig_proto selftest\n"
            "       test_hilrig_proto vectors DIR\n"
            "       test_hilrig_proto encode MSG_TYPE FLAGS SEQ FIRST_SAMPLE N_SAMPLES HEX\n"
            "       test_hilrig_proto encode-batch < lines\n"
            "       test_hilrig_proto decode-batch < lines\n");
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 2) return usage();
    if (strcmp(argv[1], "selftest") == 0 && argc == 2) return run_selftest();
    if (strcmp(argv[1], "vectors") == 0 && argc == 3) return run_vectors(argv[2]);
    if (strcmp(argv[1], "encode") == 0 && (argc == 8 || argc == 7)) {
        char *a[6];
        int i;
        for (i = 0; i < argc - 2; i++) a[i] = argv[i + 2];
        if (argc == 7) a[5] = (char *)"-";
        return encode_fields(a, stdout);
    }
    if (strcmp(argv[1], "encode-batch") == 0 && argc == 2) return encode_batch();
    if (strcmp(argv[1], "decode-batch") == 0 && argc == 2) return decode_batch();
    return usage();
}
