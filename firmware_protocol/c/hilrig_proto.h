/*
 * hilrig_proto.h - header-only C99 reference of the hilrig bridge protocol 1.1.
 *
 * Normative description: firmware_protocol/SPEC.md ("SPEC n" below cites its sections).
 *
 *   - CRC-32 (zlib / IEEE 802.3), table driven                          SPEC 2
 *   - COBS encode (canonical) and decode (accepts the trailing-01 form)  SPEC 1
 *   - frame encode: header + payload + CRC -> COBS -> 0x00               SPEC 1, 2
 *   - frame parse of an unstuffed frame with the SPEC's checks           SPEC 2
 *   - a streaming receiver fed byte by byte or by chunks, with the        SPEC 1, 2
 *     error counters (crc, cobs, oversize, length, unknown version)
 *   - message checks (unknown type, bad payload) and payload builders     SPEC 4
 *     and parsers for every message, little-endian by byte-wise access
 *
 * Every function is `static inline`; no malloc, no stdio, nothing from libc beyond
 * <stddef.h> and <stdint.h>. Every buffer is bounded by HILRIG_MAX_FRAME (1024 bytes
 * unstuffed) and HILRIG_RX_LIMIT (1030 bytes COBS-encoded). Byte order never depends on
 * the host: multi-byte fields are written and read one byte at a time (no struct
 * punning, no unaligned loads), so the same code runs on a Teensy 4.x (Cortex-M7) and
 * on a PC. It compiles as C99 and as C++ (the firmware includes it from main.cpp).
 *
 * Tested by firmware_protocol/c/test_hilrig_proto.c against the shared vectors in
 * firmware_protocol/vectors/ and against the Python codec
 * (tests/firmware_protocol/test_c_reference.py).
 */
#ifndef HILRIG_PROTO_H
#define HILRIG_PROTO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------
 * Constants
 * ---------------------------------------------------------------------------------- */

#define HILRIG_VERSION_MAJOR 1u /* SPEC 2: version_major */
#define HILRIG_VERSION_MINOR 1u /* SPEC 4.1: proto_minor (1.1 adds RELEASE) */

#define HILRIG_MAX_FRAME 1024u    /* SPEC 1: bytes of unstuffed frame, at most */
#define HILRIG_HEADER_SIZE 16u    /* SPEC 2 */
#define HILRIG_TRAILER_SIZE 4u    /* SPEC 2: the CRC-32 */
#define HILRIG_FRAME_OVERHEAD 20u /* header + trailer */
#define HILRIG_MAX_PAYLOAD (HILRIG_MAX_FRAME - HILRIG_FRAME_OVERHEAD) /* 1004 */

/* Worst-case COBS size of n bytes (either form, without delimiter): n + n/254 + 1. */
#define HILRIG_COBS_MAX_ENCODED(n) ((n) + (n) / 254u + 1u)
/* Largest wire frame including the 0x00 delimiter: 1029 + 1 = 1030 bytes. */
#define HILRIG_MAX_WIRE (HILRIG_COBS_MAX_ENCODED(HILRIG_MAX_FRAME) + 1u)
/* SPEC 1: a receiver that has buffered more than this many bytes without a delimiter
 * discards them and counts an oversize error. */
#define HILRIG_RX_LIMIT 1030u

#define HILRIG_CRC32_CHECK 0xCBF43926UL /* CRC-32 of ASCII "123456789" (SPEC 2) */

/* SPEC 4.1: LAYOUT and its CRC-32 (INFO.layout_hash). */
#define HILRIG_LAYOUT "hilrig-bridge/1 hdr=u8,u8,u16,u32,u32,u16,u16 crc32 samples=i32le*2"
#define HILRIG_LAYOUT_HASH 0x57F9E600UL

/* SPEC 4: message types. */
#define HILRIG_MSG_HELLO 0x01u
#define HILRIG_MSG_START 0x02u
#define HILRIG_MSG_STOP 0x03u
#define HILRIG_MSG_ZERO 0x04u
#define HILRIG_MSG_PING 0x05u
#define HILRIG_MSG_RELEASE 0x06u /* 1.1 */
#define HILRIG_MSG_INFO 0x81u
#define HILRIG_MSG_SAMPLES 0x82u
#define HILRIG_MSG_STATUS 0x83u
#define HILRIG_MSG_ACK 0x84u
#define HILRIG_MSG_NAK 0x85u

/* SPEC 3: flags (device to host); bits 4-15 reserved, sent as 0, ignored. */
#define HILRIG_FLAG_DEVICE_OVERRUN 0x0001u
#define HILRIG_FLAG_ILLEGAL_TRANSITION_0 0x0002u
#define HILRIG_FLAG_ILLEGAL_TRANSITION_1 0x0004u
#define HILRIG_FLAG_LATE_SAMPLE 0x0008u
#define HILRIG_FLAGS_KNOWN 0x000Fu

/* SPEC 4.1: INFO capabilities (1.1; a 1.0 device sends 0). Other bits reserved, sent as
 * 0, ignored by receivers. */
#define HILRIG_CAP_RELEASE_OUTPUT 0x0001u /* the device has a release output (RELEASE) */
#define HILRIG_CAPS_KNOWN 0x0001u

/* SPEC 4.4: NAK reasons. */
#define HILRIG_NAK_UNKNOWN_TYPE 1u
#define HILRIG_NAK_BAD_PAYLOAD 2u
#define HILRIG_NAK_NOT_ALLOWED 3u
#define HILRIG_NAK_UNSUPPORTED_RATE 4u
#define HILRIG_NAK_NO_RELEASE_OUTPUT 5u /* 1.1 */

/* SPEC 4: payload sizes. */
#define HILRIG_U32_PAYLOAD_SIZE 4u /* START (sample_rate_hz), PING (token), RELEASE */
#define HILRIG_INFO_FIXED_SIZE 44u /* SPEC 4.1 */
#define HILRIG_INFO_MAX_ID 64u     /* SPEC 4.1: firmware id, at most 64 bytes */
#define HILRIG_INFO_MAX_SIZE (HILRIG_INFO_FIXED_SIZE + HILRIG_INFO_MAX_ID)
#define HILRIG_STATUS_SIZE 32u     /* SPEC 4.2 */
#define HILRIG_ACK_SIZE 12u        /* SPEC 4 table */
#define HILRIG_NAK_SIZE 12u        /* SPEC 4 table */
#define HILRIG_SAMPLE_SIZE 8u      /* SPEC 4.3: i32 arm, i32 pendulum */
#define HILRIG_MAX_SAMPLES_PER_FRAME (HILRIG_MAX_PAYLOAD / HILRIG_SAMPLE_SIZE) /* 125 */

/* Return codes: 0 is success, errors are negative. The receiver returns
 * HILRIG_RX_FRAME (1) when a frame is complete. */
#define HILRIG_OK 0
#define HILRIG_RX_NONE 0
#define HILRIG_RX_FRAME 1
#define HILRIG_E_COBS (-1)         /* not a valid COBS encoding (SPEC 1) */
#define HILRIG_E_OVERSIZE (-2)     /* more than HILRIG_RX_LIMIT bytes without 0x00 (SPEC 1) */
#define HILRIG_E_LENGTH (-3)       /* size bounds, or len != 20 + payload_len (SPEC 2) */
#define HILRIG_E_CRC (-4)          /* CRC-32 mismatch (SPEC 2) */
#define HILRIG_E_VERSION (-5)      /* version_major != 1: never parsed further (SPEC 2) */
#define HILRIG_E_UNKNOWN_TYPE (-6) /* SPEC 4 */
#define HILRIG_E_BAD_PAYLOAD (-7)  /* the payload length does not fit the type (SPEC 4) */
#define HILRIG_E_NOSPACE (-8)      /* the caller's buffer is too small */

/* ------------------------------------------------------------------------------------
 * Little-endian field access, one byte at a time (SPEC: little-endian throughout)
 * ---------------------------------------------------------------------------------- */

/** Write v as 2 little-endian bytes at p. */
static inline void hilrig_put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v & 0xFFu);
    p[1] = (uint8_t)((v >> 8) & 0xFFu);
}

/** Write v as 4 little-endian bytes at p. */
static inline void hilrig_put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v & 0xFFu);
    p[1] = (uint8_t)((v >> 8) & 0xFFu);
    p[2] = (uint8_t)((v >> 16) & 0xFFu);
    p[3] = (uint8_t)((v >> 24) & 0xFFu);
}

/** Write v as 8 little-endian bytes at p. */
static inline void hilrig_put_u64(uint8_t *p, uint64_t v)
{
    hilrig_put_u32(p, (uint32_t)(v & 0xFFFFFFFFu));
    hilrig_put_u32(p + 4, (uint32_t)(v >> 32));
}

/** Write a two's-complement int32 as 4 little-endian bytes at p. */
static inline void hilrig_put_i32(uint8_t *p, int32_t v)
{
    hilrig_put_u32(p, (uint32_t)v); /* conversion to unsigned is modulo 2^32 */
}

/** Read 2 little-endian bytes at p. */
static inline uint16_t hilrig_get_u16(const uint8_t *p)
{
    return (uint16_t)((uint16_t)p[0] | (uint16_t)((uint16_t)p[1] << 8));
}

/** Read 4 little-endian bytes at p. */
static inline uint32_t hilrig_get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}

/** Read 8 little-endian bytes at p. */
static inline uint64_t hilrig_get_u64(const uint8_t *p)
{
    return (uint64_t)hilrig_get_u32(p) | ((uint64_t)hilrig_get_u32(p + 4) << 32);
}

/** Read a two's-complement int32 from 4 little-endian bytes at p (without the
 *  implementation-defined unsigned-to-signed conversion). */
static inline int32_t hilrig_get_i32(const uint8_t *p)
{
    uint32_t u = hilrig_get_u32(p);
    if (u < 0x80000000UL) {
        return (int32_t)u;
    }
    return (int32_t)(u - 0x80000000UL) + INT32_MIN;
}

/* ------------------------------------------------------------------------------------
 * CRC-32 (SPEC 2): reflected polynomial 0xEDB88320, init and final xor 0xFFFFFFFF
 * ---------------------------------------------------------------------------------- */

/* Where the 1 KiB CRC table lives. Empty by default (on a Teensy 4.x const data is
 * copied to the fast DTCM at startup); define it as PROGMEM before including this
 * header to keep the table in flash instead. */
#ifndef HILRIG_CRC_TABLE_ATTR
#define HILRIG_CRC_TABLE_ATTR
#endif

/**
 * zlib-style CRC-32: hilrig_crc32(0, data, n) is the CRC of data, and chaining works:
 * hilrig_crc32(hilrig_crc32(0, a, na), b, nb) is the CRC of a followed by b.
 * data may be NULL when n is 0.
 */
static inline uint32_t hilrig_crc32(uint32_t crc, const uint8_t *data, size_t n)
{
    static const uint32_t table[256] HILRIG_CRC_TABLE_ATTR = {
        0x00000000UL, 0x77073096UL, 0xEE0E612CUL, 0x990951BAUL, 0x076DC419UL, 0x706AF48FUL,
        0xE963A535UL, 0x9E6495A3UL, 0x0EDB8832UL, 0x79DCB8A4UL, 0xE0D5E91EUL, 0x97D2D988UL,
        0x09B64C2BUL, 0x7EB17CBDUL, 0xE7B82D07UL, 0x90BF1D91UL, 0x1DB71064UL, 0x6AB020F2UL,
        0xF3B97148UL, 0x84BE41DEUL, 0x1ADAD47DUL, 0x6DDDE4EBUL, 0xF4D4B551UL, 0x83D385C7UL,
        0x136C9856UL, 0x646BA8C0UL, 0xFD62F97AUL, 0x8A65C9ECUL, 0x14015C4FUL, 0x63066CD9UL,
        0xFA0F3D63UL, 0x8D080DF5UL, 0x3B6E20C8UL, 0x4C69105EUL, 0xD56041E4UL, 0xA2677172UL,
        0x3C03E4D1UL, 0x4B04D447UL, 0xD20D85FDUL, 0xA50AB56BUL, 0x35B5A8FAUL, 0x42B2986CUL,
        0xDBBBC9D6UL, 0xACBCF940UL, 0x32D86CE3UL, 0x45DF5C75UL, 0xDCD60DCFUL, 0xABD13D59UL,
        0x26D930ACUL, 0x51DE003AUL, 0xC8D75180UL, 0xBFD06116UL, 0x21B4F4B5UL, 0x56B3C423UL,
        0xCFBA9599UL, 0xB8BDA50FUL, 0x2802B89EUL, 0x5F058808UL, 0xC60CD9B2UL, 0xB10BE924UL,
        0x2F6F7C87UL, 0x58684C11UL, 0xC1611DABUL, 0xB6662D3DUL, 0x76DC4190UL, 0x01DB7106UL,
        0x98D220BCUL, 0xEFD5102AUL, 0x71B18589UL, 0x06B6B51FUL, 0x9FBFE4A5UL, 0xE8B8D433UL,
        0x7807C9A2UL, 0x0F00F934UL, 0x9609A88EUL, 0xE10E9818UL, 0x7F6A0DBBUL, 0x086D3D2DUL,
        0x91646C97UL, 0xE6635C01UL, 0x6B6B51F4UL, 0x1C6C6162UL, 0x856530D8UL, 0xF262004EUL,
        0x6C0695EDUL, 0x1B01A57BUL, 0x8208F4C1UL, 0xF50FC457UL, 0x65B0D9C6UL, 0x12B7E950UL,
        0x8BBEB8EAUL, 0xFCB9887CUL, 0x62DD1DDFUL, 0x15DA2D49UL, 0x8CD37CF3UL, 0xFBD44C65UL,
        0x4DB26158UL, 0x3AB551CEUL, 0xA3BC0074UL, 0xD4BB30E2UL, 0x4ADFA541UL, 0x3DD895D7UL,
        0xA4D1C46DUL, 0xD3D6F4FBUL, 0x4369E96AUL, 0x346ED9FCUL, 0xAD678846UL, 0xDA60B8D0UL,
        0x44042D73UL, 0x33031DE5UL, 0xAA0A4C5FUL, 0xDD0D7CC9UL, 0x5005713CUL, 0x270241AAUL,
        0xBE0B1010UL, 0xC90C2086UL, 0x5768B525UL, 0x206F85B3UL, 0xB966D409UL, 0xCE61E49FUL,
        0x5EDEF90EUL, 0x29D9C998UL, 0xB0D09822UL, 0xC7D7A8B4UL, 0x59B33D17UL, 0x2EB40D81UL,
        0xB7BD5C3BUL, 0xC0BA6CADUL, 0xEDB88320UL, 0x9ABFB3B6UL, 0x03B6E20CUL, 0x74B1D29AUL,
        0xEAD54739UL, 0x9DD277AFUL, 0x04DB2615UL, 0x73DC1683UL, 0xE3630B12UL, 0x94643B84UL,
        0x0D6D6A3EUL, 0x7A6A5AA8UL, 0xE40ECF0BUL, 0x9309FF9DUL, 0x0A00AE27UL, 0x7D079EB1UL,
        0xF00F9344UL, 0x8708A3D2UL, 0x1E01F268UL, 0x6906C2FEUL, 0xF762575DUL, 0x806567CBUL,
        0x196C3671UL, 0x6E6B06E7UL, 0xFED41B76UL, 0x89D32BE0UL, 0x10DA7A5AUL, 0x67DD4ACCUL,
        0xF9B9DF6FUL, 0x8EBEEFF9UL, 0x17B7BE43UL, 0x60B08ED5UL, 0xD6D6A3E8UL, 0xA1D1937EUL,
        0x38D8C2C4UL, 0x4FDFF252UL, 0xD1BB67F1UL, 0xA6BC5767UL, 0x3FB506DDUL, 0x48B2364BUL,
        0xD80D2BDAUL, 0xAF0A1B4CUL, 0x36034AF6UL, 0x41047A60UL, 0xDF60EFC3UL, 0xA867DF55UL,
        0x316E8EEFUL, 0x4669BE79UL, 0xCB61B38CUL, 0xBC66831AUL, 0x256FD2A0UL, 0x5268E236UL,
        0xCC0C7795UL, 0xBB0B4703UL, 0x220216B9UL, 0x5505262FUL, 0xC5BA3BBEUL, 0xB2BD0B28UL,
        0x2BB45A92UL, 0x5CB36A04UL, 0xC2D7FFA7UL, 0xB5D0CF31UL, 0x2CD99E8BUL, 0x5BDEAE1DUL,
        0x9B64C2B0UL, 0xEC63F226UL, 0x756AA39CUL, 0x026D930AUL, 0x9C0906A9UL, 0xEB0E363FUL,
        0x72076785UL, 0x05005713UL, 0x95BF4A82UL, 0xE2B87A14UL, 0x7BB12BAEUL, 0x0CB61B38UL,
        0x92D28E9BUL, 0xE5D5BE0DUL, 0x7CDCEFB7UL, 0x0BDBDF21UL, 0x86D3D2D4UL, 0xF1D4E242UL,
        0x68DDB3F8UL, 0x1FDA836EUL, 0x81BE16CDUL, 0xF6B9265BUL, 0x6FB077E1UL, 0x18B74777UL,
        0x88085AE6UL, 0xFF0F6A70UL, 0x66063BCAUL, 0x11010B5CUL, 0x8F659EFFUL, 0xF862AE69UL,
        0x616BFFD3UL, 0x166CCF45UL, 0xA00AE278UL, 0xD70DD2EEUL, 0x4E048354UL, 0x3903B3C2UL,
        0xA7672661UL, 0xD06016F7UL, 0x4969474DUL, 0x3E6E77DBUL, 0xAED16A4AUL, 0xD9D65ADCUL,
        0x40DF0B66UL, 0x37D83BF0UL, 0xA9BCAE53UL, 0xDEBB9EC5UL, 0x47B2CF7FUL, 0x30B5FFE9UL,
        0xBDBDF21CUL, 0xCABAC28AUL, 0x53B39330UL, 0x24B4A3A6UL, 0xBAD03605UL, 0xCDD70693UL,
        0x54DE5729UL, 0x23D967BFUL, 0xB3667A2EUL, 0xC4614AB8UL, 0x5D681B02UL, 0x2A6F2B94UL,
        0xB40BBE37UL, 0xC30C8EA1UL, 0x5A05DF1BUL, 0x2D02EF8DUL
    };
    uint32_t c = crc ^ 0xFFFFFFFFUL;
    size_t i;
    for (i = 0; i < n; i++) {
        c = table[(c ^ data[i]) & 0xFFu] ^ (c >> 8);
    }
    return c ^ 0xFFFFFFFFUL;
}

/* ------------------------------------------------------------------------------------
 * COBS (SPEC 1)
 * ---------------------------------------------------------------------------------- */

/**
 * Incremental canonical COBS encoder writing into a caller buffer (no delimiter). It
 * lets a frame be stuffed straight from header, payload and CRC without an
 * intermediate copy. Use: hilrig_cobs_enc_init, hilrig_cobs_enc_put / _write,
 * hilrig_cobs_enc_finish.
 */
typedef struct {
    uint8_t *out;
    size_t cap;
    size_t pos;      /* next free byte */
    size_t code_pos; /* where the current block's code byte goes */
    uint8_t code;    /* 1 + the bytes in the current block */
    uint8_t failed;  /* the output did not fit */
} hilrig_cobs_enc_t;

/** Start encoding into out[0, cap). */
static inline void hilrig_cobs_enc_init(hilrig_cobs_enc_t *e, uint8_t *out, size_t cap)
{
    e->out = out;
    e->cap = cap;
    e->pos = 1;
    e->code_pos = 0;
    e->code = 1;
    e->failed = (uint8_t)(cap < 1u ? 1u : 0u);
}

/* Close the current block (its code byte becomes final), reserve the next code byte. */
static inline void hilrig_cobs_enc_close_(hilrig_cobs_enc_t *e)
{
    e->out[e->code_pos] = e->code;
    if (e->pos >= e->cap) {
        e->failed = 1u;
        return;
    }
    e->code_pos = e->pos;
    e->pos++;
    e->code = 1u;
}

/** Append one unencoded byte. A full block (254 non-zero bytes) is closed only when
 *  another byte follows, which makes the output canonical (no trailing 01). */
static inline void hilrig_cobs_enc_put(hilrig_cobs_enc_t *e, uint8_t b)
{
    if (e->failed) {
        return;
    }
    if (e->code == 0xFFu) {
        hilrig_cobs_enc_close_(e);
        if (e->failed) {
            return;
        }
    }
    if (b == 0u) {
        hilrig_cobs_enc_close_(e);
    } else {
        if (e->pos >= e->cap) {
            e->failed = 1u;
            return;
        }
        e->out[e->pos] = b;
        e->pos++;
        e->code = (uint8_t)(e->code + 1u);
    }
}

/** Append n unencoded bytes (data may be NULL when n is 0). */
static inline void hilrig_cobs_enc_write(hilrig_cobs_enc_t *e, const uint8_t *data, size_t n)
{
    size_t i;
    for (i = 0; i < n && !e->failed; i++) {
        hilrig_cobs_enc_put(e, data[i]);
    }
}

/** Finish: returns the encoded length (>= 1, no delimiter), or 0 if it did not fit. */
static inline size_t hilrig_cobs_enc_finish(hilrig_cobs_enc_t *e)
{
    if (e->failed) {
        return 0;
    }
    e->out[e->code_pos] = e->code;
    return e->pos;
}

/**
 * Canonical COBS of in[0, n) into out[0, cap), without the 0x00 delimiter (SPEC 1).
 * Returns the encoded length (an empty input encodes to the single byte 01), or 0 if
 * cap is too small (HILRIG_COBS_MAX_ENCODED(n) always suffices). in and out must not
 * overlap.
 */
static inline size_t hilrig_cobs_encode(const uint8_t *in, size_t n, uint8_t *out, size_t cap)
{
    hilrig_cobs_enc_t e;
    hilrig_cobs_enc_init(&e, out, cap);
    hilrig_cobs_enc_write(&e, in, n);
    return hilrig_cobs_enc_finish(&e);
}

/**
 * Decode COBS in[0, n) (without the delimiter) into out[0, cap) (SPEC 1). Accepts the
 * canonical form and the non-canonical extra 01 after a final 254-byte block.
 * Returns HILRIG_OK and sets *out_len; HILRIG_E_COBS for an empty input, a zero byte or
 * a code running past the end; HILRIG_E_NOSPACE if out is too small. Decoding in place
 * (out == in) is allowed: the output never overtakes the input.
 */
static inline int hilrig_cobs_decode(const uint8_t *in, size_t n, uint8_t *out, size_t cap,
                                     size_t *out_len)
{
    size_t i = 0;
    size_t o = 0;
    if (n == 0) {
        return HILRIG_E_COBS;
    }
    while (i < n) {
        uint8_t code = in[i];
        size_t k;
        i++;
        if (code == 0u) {
            return HILRIG_E_COBS;
        }
        if ((size_t)code - 1u > n - i) {
            return HILRIG_E_COBS; /* the block runs past the end */
        }
        for (k = 1; k < code; k++) {
            uint8_t b = in[i];
            i++;
            if (b == 0u) {
                return HILRIG_E_COBS;
            }
            if (o >= cap) {
                return HILRIG_E_NOSPACE;
            }
            out[o] = b;
            o++;
        }
        if (code != 0xFFu && i < n) {
            if (o >= cap) {
                return HILRIG_E_NOSPACE;
            }
            out[o] = 0u;
            o++;
        }
    }
    *out_len = o;
    return HILRIG_OK;
}

/* ------------------------------------------------------------------------------------
 * Frames (SPEC 2)
 * ---------------------------------------------------------------------------------- */

/** One parsed frame. payload points into the buffer that was parsed (for the
 *  receiver: valid until the next byte is pushed). */
typedef struct {
    uint8_t version_major;
    uint8_t msg_type;
    uint16_t flags; /* as sent; receivers ignore bits 4-15 (SPEC 3) */
    uint32_t seq;
    uint32_t first_sample;
    uint16_t n_samples;
    uint16_t payload_len;
    const uint8_t *payload;
} hilrig_frame_t;

/**
 * Encode one frame for the wire (SPEC 1, 2): header (version_major 1), payload,
 * CRC-32, COBS-stuffed, then one 0x00, into out[0, cap). Returns the wire length
 * including the delimiter, or 0 if payload_len > HILRIG_MAX_PAYLOAD or out is too small
 * (HILRIG_MAX_WIRE bytes always suffice). payload may be NULL when payload_len is 0.
 * Nothing else is checked: flags and n_samples are sent as given.
 */
static inline size_t hilrig_encode_frame(uint8_t *out, size_t cap, uint8_t msg_type,
                                         uint16_t flags, uint32_t seq, uint32_t first_sample,
                                         uint16_t n_samples, const uint8_t *payload,
                                         size_t payload_len)
{
    uint8_t head[HILRIG_HEADER_SIZE];
    uint8_t tail[HILRIG_TRAILER_SIZE];
    uint32_t crc;
    hilrig_cobs_enc_t e;
    size_t n;
    if (payload_len > HILRIG_MAX_PAYLOAD) {
        return 0;
    }
    head[0] = (uint8_t)HILRIG_VERSION_MAJOR;
    head[1] = msg_type;
    hilrig_put_u16(head + 2, flags);
    hilrig_put_u32(head + 4, seq);
    hilrig_put_u32(head + 8, first_sample);
    hilrig_put_u16(head + 12, n_samples);
    hilrig_put_u16(head + 14, (uint16_t)payload_len);
    crc = hilrig_crc32(0, head, sizeof head);
    crc = hilrig_crc32(crc, payload, payload_len);
    hilrig_put_u32(tail, crc);

    hilrig_cobs_enc_init(&e, out, cap);
    hilrig_cobs_enc_write(&e, head, sizeof head);
    hilrig_cobs_enc_write(&e, payload, payload_len);
    hilrig_cobs_enc_write(&e, tail, sizeof tail);
    n = hilrig_cobs_enc_finish(&e);
    if (n == 0 || n >= cap) {
        return 0; /* no room for the stuffed frame or for its delimiter */
    }
    out[n] = 0u;
    return n + 1u;
}

/**
 * Check and split an unstuffed frame f[0, len) (SPEC 2). The order of the checks is
 * the Python codec's (parse_frame): empty -> HILRIG_E_LENGTH; version_major != 1 ->
 * HILRIG_E_VERSION (nothing after byte 0 is looked at); len < 20 or len > MAX_FRAME ->
 * HILRIG_E_LENGTH; CRC-32 of all but the last 4 bytes != the last 4 bytes ->
 * HILRIG_E_CRC; len != 20 + payload_len -> HILRIG_E_LENGTH. On HILRIG_OK *out holds the
 * header fields and out->payload points at f + 16. Types and payload sizes are not
 * checked here (see hilrig_check_message).
 */
static inline int hilrig_parse_frame(const uint8_t *f, size_t len, hilrig_frame_t *out)
{
    uint16_t plen;
    if (len == 0) {
        return HILRIG_E_LENGTH;
    }
    if (f[0] != HILRIG_VERSION_MAJOR) {
        return HILRIG_E_VERSION;
    }
    if (len < HILRIG_FRAME_OVERHEAD || len > HILRIG_MAX_FRAME) {
        return HILRIG_E_LENGTH;
    }
    if (hilrig_crc32(0, f, len - HILRIG_TRAILER_SIZE) !=
        hilrig_get_u32(f + len - HILRIG_TRAILER_SIZE)) {
        return HILRIG_E_CRC;
    }
    plen = hilrig_get_u16(f + 14);
    if (len != HILRIG_FRAME_OVERHEAD + (size_t)plen) {
        return HILRIG_E_LENGTH;
    }
    out->version_major = f[0];
    out->msg_type = f[1];
    out->flags = hilrig_get_u16(f + 2);
    out->seq = hilrig_get_u32(f + 4);
    out->first_sample = hilrig_get_u32(f + 8);
    out->n_samples = hilrig_get_u16(f + 12);
    out->payload_len = plen;
    out->payload = f + HILRIG_HEADER_SIZE;
    return HILRIG_OK;
}

/**
 * Message-level check of a parsed frame (SPEC 4): HILRIG_E_UNKNOWN_TYPE for a type not
 * in the table; HILRIG_E_BAD_PAYLOAD if payload_len does not fit the type (HELLO, STOP,
 * ZERO: 0; START, PING, RELEASE: 4; INFO: 44..108; SAMPLES: 8 * n_samples; STATUS: 32;
 * ACK, NAK: 12); else HILRIG_OK.
 */
static inline int hilrig_check_message(const hilrig_frame_t *f)
{
    size_t plen = f->payload_len;
    switch (f->msg_type) {
    case HILRIG_MSG_HELLO:
    case HILRIG_MSG_STOP:
    case HILRIG_MSG_ZERO:
        return plen == 0u ? HILRIG_OK : HILRIG_E_BAD_PAYLOAD;
    case HILRIG_MSG_START:
    case HILRIG_MSG_PING:
    case HILRIG_MSG_RELEASE:
        return plen == HILRIG_U32_PAYLOAD_SIZE ? HILRIG_OK : HILRIG_E_BAD_PAYLOAD;
    case HILRIG_MSG_INFO:
        return (plen >= HILRIG_INFO_FIXED_SIZE && plen <= HILRIG_INFO_MAX_SIZE)
                   ? HILRIG_OK
                   : HILRIG_E_BAD_PAYLOAD;
    case HILRIG_MSG_SAMPLES:
        return plen == (size_t)f->n_samples * HILRIG_SAMPLE_SIZE ? HILRIG_OK
                                                                 : HILRIG_E_BAD_PAYLOAD;
    case HILRIG_MSG_STATUS:
        return plen == HILRIG_STATUS_SIZE ? HILRIG_OK : HILRIG_E_BAD_PAYLOAD;
    case HILRIG_MSG_ACK:
        return plen == HILRIG_ACK_SIZE ? HILRIG_OK : HILRIG_E_BAD_PAYLOAD;
    case HILRIG_MSG_NAK:
        return plen == HILRIG_NAK_SIZE ? HILRIG_OK : HILRIG_E_BAD_PAYLOAD;
    default:
        return HILRIG_E_UNKNOWN_TYPE;
    }
}

/* ------------------------------------------------------------------------------------
 * Streaming receiver (SPEC 1, 2)
 * ---------------------------------------------------------------------------------- */

/** Receiver counters; they wrap at 2^32. */
typedef struct {
    uint32_t frames;          /* frames that passed hilrig_parse_frame */
    uint32_t crc_errors;      /* SPEC 2 */
    uint32_t cobs_errors;     /* SPEC 1 */
    uint32_t oversize;        /* SPEC 1: more than HILRIG_RX_LIMIT bytes without 0x00, or
                                 a frame that unstuffs to more than MAX_FRAME bytes */
    uint32_t length_errors;   /* SPEC 2: fewer than 20 bytes, or not 20 + payload_len */
    uint32_t unknown_version; /* SPEC 2 */
    uint32_t unknown_type;    /* SPEC 4, counted by hilrig_rx_check_message */
    uint32_t bad_payload;     /* SPEC 4, counted by hilrig_rx_check_message */
    uint32_t lost_frames;     /* SPEC 2, counted by hilrig_rx_track_seq */
} hilrig_rx_stats_t;

/**
 * Receiver state: a 1030-byte buffer and the counters. The COBS bytes of the frame
 * being received are buffered; at its delimiter they are decoded in place and parsed.
 */
typedef struct {
    uint8_t buf[HILRIG_RX_LIMIT];
    size_t len;         /* bytes buffered since the last delimiter */
    uint8_t discarding; /* after an oversize error: drop bytes up to the next 0x00 */
    uint8_t have_seq;   /* seq tracking (hilrig_rx_track_seq) */
    uint32_t last_seq;
    hilrig_rx_stats_t stats;
} hilrig_rx_t;

/** Reset a receiver: empty buffer, all counters 0, no seq seen yet. */
static inline void hilrig_rx_init(hilrig_rx_t *rx)
{
    rx->len = 0;
    rx->discarding = 0;
    rx->have_seq = 0;
    rx->last_seq = 0;
    rx->stats.frames = 0;
    rx->stats.crc_errors = 0;
    rx->stats.cobs_errors = 0;
    rx->stats.oversize = 0;
    rx->stats.length_errors = 0;
    rx->stats.unknown_version = 0;
    rx->stats.unknown_type = 0;
    rx->stats.bad_payload = 0;
    rx->stats.lost_frames = 0;
}

/* Count one error code in rx->stats. */
static inline void hilrig_rx_count_(hilrig_rx_t *rx, int err)
{
    switch (err) {
    case HILRIG_E_COBS: rx->stats.cobs_errors++; break;
    case HILRIG_E_OVERSIZE: rx->stats.oversize++; break;
    case HILRIG_E_LENGTH: rx->stats.length_errors++; break;
    case HILRIG_E_CRC: rx->stats.crc_errors++; break;
    case HILRIG_E_VERSION: rx->stats.unknown_version++; break;
    case HILRIG_E_UNKNOWN_TYPE: rx->stats.unknown_type++; break;
    case HILRIG_E_BAD_PAYLOAD: rx->stats.bad_payload++; break;
    default: break;
    }
}

/**
 * Feed one received byte (SPEC 1, 2). Returns
 *   HILRIG_RX_FRAME (1): a frame is complete and valid; *out describes it and its
 *                        payload lives in rx->buf until the next byte is pushed;
 *   HILRIG_RX_NONE (0):  nothing yet (a 0x00 with nothing buffered is skipped, not an
 *                        error);
 *   a negative HILRIG_E_*: a frame was dropped and counted in rx->stats.
 * Non-zero bytes are buffered; at the 1031st without a delimiter the buffer is dropped,
 * an oversize error counted and bytes discarded up to and including the next 0x00.
 * At a delimiter the buffered bytes are COBS-decoded (else HILRIG_E_COBS); a frame that
 * unstuffs to more than MAX_FRAME bytes is counted as oversize (HILRIG_E_OVERSIZE, before
 * its version byte is looked at, like the Python StreamDecoder); otherwise it is checked
 * by hilrig_parse_frame. Either way the receiver then starts afresh after that 0x00.
 */
static inline int hilrig_rx_push(hilrig_rx_t *rx, uint8_t b, hilrig_frame_t *out)
{
    size_t n;
    size_t flen = 0;
    int rc;
    if (b != 0u) {
        if (rx->discarding) {
            return HILRIG_RX_NONE;
        }
        if (rx->len >= HILRIG_RX_LIMIT) {
            rx->len = 0;
            rx->discarding = 1u;
            rx->stats.oversize++;
            return HILRIG_E_OVERSIZE;
        }
        rx->buf[rx->len] = b;
        rx->len++;
        return HILRIG_RX_NONE;
    }
    /* the delimiter */
    if (rx->discarding) {
        rx->discarding = 0;
        return HILRIG_RX_NONE;
    }
    n = rx->len;
    rx->len = 0;
    if (n == 0) {
        return HILRIG_RX_NONE; /* an empty frame: skipped */
    }
    rc = hilrig_cobs_decode(rx->buf, n, rx->buf, sizeof rx->buf, &flen);
    if (rc != HILRIG_OK) {
        rc = HILRIG_E_COBS; /* (NOSPACE cannot happen: decoding never grows) */
    } else if (flen > HILRIG_MAX_FRAME) {
        rc = HILRIG_E_OVERSIZE; /* unstuffs to more than MAX_FRAME (as the Python
                                   StreamDecoder counts it) */
    } else {
        rc = hilrig_parse_frame(rx->buf, flen, out);
    }
    if (rc != HILRIG_OK) {
        hilrig_rx_count_(rx, rc);
        return rc;
    }
    rx->stats.frames++;
    return HILRIG_RX_FRAME;
}

/**
 * Feed a chunk. Consumes bytes up to and including the end of the first complete valid
 * frame and returns HILRIG_RX_FRAME with *out filled, or consumes everything and returns
 * HILRIG_RX_NONE. *consumed is set either way; errors are only counted. Loop:
 *
 *     while (n > 0) {
 *         size_t used;
 *         if (hilrig_rx_feed(&rx, p, n, &used, &frame) == HILRIG_RX_FRAME) handle(&frame);
 *         p += used; n -= used;
 *     }
 */
static inline int hilrig_rx_feed(hilrig_rx_t *rx, const uint8_t *data, size_t n,
                                 size_t *consumed, hilrig_frame_t *out)
{
    size_t i;
    for (i = 0; i < n; i++) {
        if (hilrig_rx_push(rx, data[i], out) == HILRIG_RX_FRAME) {
            *consumed = i + 1u;
            return HILRIG_RX_FRAME;
        }
    }
    *consumed = n;
    return HILRIG_RX_NONE;
}

/** hilrig_check_message, counting unknown_type / bad_payload in rx->stats (SPEC 4). */
static inline int hilrig_rx_check_message(hilrig_rx_t *rx, const hilrig_frame_t *f)
{
    int rc = hilrig_check_message(f);
    if (rc != HILRIG_OK) {
        hilrig_rx_count_(rx, rc);
    }
    return rc;
}

/**
 * Sequence tracking (SPEC 2): call it with each accepted frame's seq. A jump by d > 1
 * (modulo 2^32: the counter wraps) adds d - 1 to stats.lost_frames and returns it. A
 * repeated or backwards seq (d == 0 or d >= 2^31) counts nothing and tracking restarts
 * there: the sender restarted its counter (after HELLO, or a reset).
 */
static inline uint32_t hilrig_rx_track_seq(hilrig_rx_t *rx, uint32_t seq)
{
    uint32_t lost = 0;
    if (rx->have_seq) {
        uint32_t d = seq - rx->last_seq;
        if (d > 1u && d < 0x80000000UL) {
            lost = d - 1u;
            rx->stats.lost_frames += lost;
        }
    }
    rx->have_seq = 1u;
    rx->last_seq = seq;
    return lost;
}

/** Forget the last seq (a new session: the sender's counter restarts at 0). */
static inline void hilrig_rx_reset_seq(hilrig_rx_t *rx)
{
    rx->have_seq = 0;
    rx->last_seq = 0;
}

/* ------------------------------------------------------------------------------------
 * Payloads (SPEC 4). Builders write into p and return the payload length (0 when the
 * arguments do not fit); reserved bytes are always written as 0. Parsers return
 * HILRIG_OK or HILRIG_E_BAD_PAYLOAD and ignore the reserved bytes.
 * ---------------------------------------------------------------------------------- */

/** START payload (host -> device): u32 sample_rate_hz. p needs 4 bytes. */
static inline size_t hilrig_build_start(uint8_t *p, uint32_t sample_rate_hz)
{
    hilrig_put_u32(p, sample_rate_hz);
    return HILRIG_U32_PAYLOAD_SIZE;
}

/** PING payload (host -> device): u32 token. p needs 4 bytes. */
static inline size_t hilrig_build_ping(uint8_t *p, uint32_t token)
{
    hilrig_put_u32(p, token);
    return HILRIG_U32_PAYLOAD_SIZE;
}

/** RELEASE payload (host -> device, 1.1): u32 pulse_ms, 0 = the device's default pulse.
 *  p needs 4 bytes. */
static inline size_t hilrig_build_release(uint8_t *p, uint32_t pulse_ms)
{
    hilrig_put_u32(p, pulse_ms);
    return HILRIG_U32_PAYLOAD_SIZE;
}

/** Parse the u32 of a START (sample_rate_hz), PING (token) or RELEASE (pulse_ms)
 *  payload. */
static inline int hilrig_parse_u32(const uint8_t *p, size_t len, uint32_t *value)
{
    if (len != HILRIG_U32_PAYLOAD_SIZE) {
        return HILRIG_E_BAD_PAYLOAD;
    }
    *value = hilrig_get_u32(p);
    return HILRIG_OK;
}

/** INFO fields (SPEC 4.1). firmware_id is UTF-8, not NUL-terminated, at most 64 bytes. */
typedef struct {
    uint8_t proto_major;       /* 1 */
    uint8_t proto_minor;       /* HILRIG_VERSION_MINOR; 0 from a 1.0 device */
    uint16_t capabilities;     /* HILRIG_CAP_*; 0 from a 1.0 device (reserved there) */
    uint32_t sample_rate_hz;   /* current or default rate */
    uint32_t counts_per_rev_0; /* arm */
    uint32_t counts_per_rev_1; /* pendulum */
    uint32_t layout_hash;      /* HILRIG_LAYOUT_HASH */
    uint64_t boot_id;          /* random at every power-up / reset */
    uint16_t max_samples_per_frame;
    uint32_t device_us_at_boot; /* 0 if unknown */
    const uint8_t *firmware_id;
    size_t firmware_id_len;
} hilrig_info_t;

/** Build an INFO payload (44 + firmware_id_len bytes) into p[0, cap). Returns its
 *  length, or 0 if firmware_id_len > 64 or cap is too small. */
static inline size_t hilrig_build_info(uint8_t *p, size_t cap, const hilrig_info_t *info)
{
    size_t n = HILRIG_INFO_FIXED_SIZE + info->firmware_id_len;
    size_t i;
    if (info->firmware_id_len > HILRIG_INFO_MAX_ID || cap < n) {
        return 0;
    }
    p[0] = info->proto_major;
    p[1] = info->proto_minor;
    hilrig_put_u16(p + 2, info->capabilities);
    hilrig_put_u32(p + 4, info->sample_rate_hz);
    hilrig_put_u32(p + 8, info->counts_per_rev_0);
    hilrig_put_u32(p + 12, info->counts_per_rev_1);
    hilrig_put_u32(p + 16, info->layout_hash);
    hilrig_put_u64(p + 20, info->boot_id);
    hilrig_put_u16(p + 28, info->max_samples_per_frame);
    hilrig_put_u16(p + 30, 0u);
    hilrig_put_u32(p + 32, info->device_us_at_boot);
    hilrig_put_u32(p + 36, 0u);
    hilrig_put_u32(p + 40, 0u);
    for (i = 0; i < info->firmware_id_len; i++) {
        p[HILRIG_INFO_FIXED_SIZE + i] = info->firmware_id[i];
    }
    return n;
}

/** Parse an INFO payload; info->firmware_id points into p. capabilities is returned as
 *  sent: test bits with HILRIG_CAP_*, ignore the others. */
static inline int hilrig_parse_info(const uint8_t *p, size_t len, hilrig_info_t *info)
{
    if (len < HILRIG_INFO_FIXED_SIZE || len > HILRIG_INFO_MAX_SIZE) {
        return HILRIG_E_BAD_PAYLOAD;
    }
    info->proto_major = p[0];
    info->proto_minor = p[1];
    info->capabilities = hilrig_get_u16(p + 2);
    info->sample_rate_hz = hilrig_get_u32(p + 4);
    info->counts_per_rev_0 = hilrig_get_u32(p + 8);
    info->counts_per_rev_1 = hilrig_get_u32(p + 12);
    info->layout_hash = hilrig_get_u32(p + 16);
    info->boot_id = hilrig_get_u64(p + 20);
    info->max_samples_per_frame = hilrig_get_u16(p + 28);
    info->device_us_at_boot = hilrig_get_u32(p + 32);
    info->firmware_id = p + HILRIG_INFO_FIXED_SIZE;
    info->firmware_id_len = len - HILRIG_INFO_FIXED_SIZE;
    return HILRIG_OK;
}

/** STATUS fields (SPEC 4.2). */
typedef struct {
    uint64_t device_us;       /* microseconds since boot */
    uint32_t samples_taken;   /* since START */
    uint32_t frames_dropped;  /* whole frames the device could not send */
    uint32_t samples_dropped; /* samples in those frames */
    uint32_t overruns;        /* timer overruns (late samples) */
    uint32_t illegal_0;       /* illegal quadrature transitions, arm */
    uint32_t illegal_1;       /* illegal quadrature transitions, pendulum */
} hilrig_status_t;

/** Build a STATUS payload (32 bytes) into p. */
static inline size_t hilrig_build_status(uint8_t *p, const hilrig_status_t *s)
{
    hilrig_put_u64(p, s->device_us);
    hilrig_put_u32(p + 8, s->samples_taken);
    hilrig_put_u32(p + 12, s->frames_dropped);
    hilrig_put_u32(p + 16, s->samples_dropped);
    hilrig_put_u32(p + 20, s->overruns);
    hilrig_put_u32(p + 24, s->illegal_0);
    hilrig_put_u32(p + 28, s->illegal_1);
    return HILRIG_STATUS_SIZE;
}

/** Parse a STATUS payload. */
static inline int hilrig_parse_status(const uint8_t *p, size_t len, hilrig_status_t *s)
{
    if (len != HILRIG_STATUS_SIZE) {
        return HILRIG_E_BAD_PAYLOAD;
    }
    s->device_us = hilrig_get_u64(p);
    s->samples_taken = hilrig_get_u32(p + 8);
    s->frames_dropped = hilrig_get_u32(p + 12);
    s->samples_dropped = hilrig_get_u32(p + 16);
    s->overruns = hilrig_get_u32(p + 20);
    s->illegal_0 = hilrig_get_u32(p + 24);
    s->illegal_1 = hilrig_get_u32(p + 28);
    return HILRIG_OK;
}

/** ACK / NAK fields (SPEC 4, 4.4). reason is 0 for an ACK. */
typedef struct {
    uint32_t acked_seq; /* seq of the host frame answered */
    uint8_t acked_type; /* its msg_type */
    uint8_t reason;     /* NAK only: HILRIG_NAK_* */
    uint32_t value;     /* PING: the token; otherwise message specific */
} hilrig_reply_t;

/** Build an ACK payload (12 bytes): u32 acked_seq, u8 acked_type, u8 reserved[3],
 *  u32 value. */
static inline size_t hilrig_build_ack(uint8_t *p, uint32_t acked_seq, uint8_t acked_type,
                                      uint32_t value)
{
    hilrig_put_u32(p, acked_seq);
    p[4] = acked_type;
    p[5] = 0u;
    p[6] = 0u;
    p[7] = 0u;
    hilrig_put_u32(p + 8, value);
    return HILRIG_ACK_SIZE;
}

/** Build a NAK payload (12 bytes): u32 acked_seq, u8 acked_type, u8 reason,
 *  u8 reserved[2], u32 value. */
static inline size_t hilrig_build_nak(uint8_t *p, uint32_t acked_seq, uint8_t acked_type,
                                      uint8_t reason, uint32_t value)
{
    hilrig_put_u32(p, acked_seq);
    p[4] = acked_type;
    p[5] = reason;
    p[6] = 0u;
    p[7] = 0u;
    hilrig_put_u32(p + 8, value);
    return HILRIG_NAK_SIZE;
}

/** Parse an ACK payload (r->reason is set to 0). */
static inline int hilrig_parse_ack(const uint8_t *p, size_t len, hilrig_reply_t *r)
{
    if (len != HILRIG_ACK_SIZE) {
        return HILRIG_E_BAD_PAYLOAD;
    }
    r->acked_seq = hilrig_get_u32(p);
    r->acked_type = p[4];
    r->reason = 0u;
    r->value = hilrig_get_u32(p + 8);
    return HILRIG_OK;
}

/** Parse a NAK payload. */
static inline int hilrig_parse_nak(const uint8_t *p, size_t len, hilrig_reply_t *r)
{
    if (len != HILRIG_NAK_SIZE) {
        return HILRIG_E_BAD_PAYLOAD;
    }
    r->acked_seq = hilrig_get_u32(p);
    r->acked_type = p[4];
    r->reason = p[5];
    r->value = hilrig_get_u32(p + 8);
    return HILRIG_OK;
}

/** Write sample i (i32 arm, i32 pendulum: absolute counts, SPEC 4.3) of a SAMPLES
 *  payload at p. A payload of n samples is 8 * n bytes. */
static inline void hilrig_put_sample(uint8_t *p, size_t i, int32_t arm, int32_t pendulum)
{
    hilrig_put_i32(p + i * HILRIG_SAMPLE_SIZE, arm);
    hilrig_put_i32(p + i * HILRIG_SAMPLE_SIZE + 4u, pendulum);
}

/** Read sample i of a SAMPLES payload at p. */
static inline void hilrig_get_sample(const uint8_t *p, size_t i, int32_t *arm,
                                     int32_t *pendulum)
{
    *arm = hilrig_get_i32(p + i * HILRIG_SAMPLE_SIZE);
    *pendulum = hilrig_get_i32(p + i * HILRIG_SAMPLE_SIZE + 4u);
}

/** Build a SAMPLES payload from n interleaved counts (arm0, pend0, arm1, pend1, ...)
 *  into p[0, cap). Returns 8 * n, or 0 if n > 125 or cap is too small. */
static inline size_t hilrig_build_samples(uint8_t *p, size_t cap, const int32_t *counts,
                                          size_t n)
{
    size_t i;
    if (n > HILRIG_MAX_SAMPLES_PER_FRAME || cap < n * HILRIG_SAMPLE_SIZE) {
        return 0;
    }
    for (i = 0; i < n; i++) {
        hilrig_put_sample(p, i, counts[2u * i], counts[2u * i + 1u]);
    }
    return n * HILRIG_SAMPLE_SIZE;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HILRIG_PROTO_H */
