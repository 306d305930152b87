// bridge.h - protocol and session logic of the hilrig bridge firmware, hardware-free.
//
// main.cpp wires it to the Teensy 4.x (QuadEncoder hardware decoders, IntervalTimer,
// USB serial, TRNG); host_test/bridge_host_test.cpp drives it with fakes on a PC. All
// wire formats come from ../../c/hilrig_proto.h (tested against the shared vectors).
// Section numbers ("SPEC n") refer to firmware_protocol/SPEC.md.
//
// Data path:
//   sample timer ISR -> onSampleIsr(): one sample (index, arm, pendulum, flags) into a
//                       single-producer / single-consumer ring buffer, never blocks
//   main loop        -> poll(): ring -> SAMPLES frames of samplesPerFrame() samples,
//                       STATUS about once a second; onReceive(): host commands -> replies
// RELEASE (1.1) drives the release output from the main loop; the sample ISR turns it
// off when the pulse is over, so nothing ever waits for the pulse.
// Every frame goes out whole or not at all: sendFrame() checks availableForWrite() and
// drops and counts a frame that does not fit (SPEC 4.2 frames_dropped / samples_dropped).
// SAMPLES and STATUS leave kReplyReserve bytes free (SPEC 6): a stream the host reads
// slowly fills the buffer, and a command's answer must still go out.
#ifndef HILRIG_BRIDGE_H
#define HILRIG_BRIDGE_H

#include <stddef.h>
#include <stdint.h>

#include "hilrig_proto.h"

// Keeps the compiler from moving memory accesses across it (ISR <-> main loop on one
// core; the Cortex-M7 keeps its own accesses in program order for itself).
#define HILRIG_COMPILER_BARRIER() __asm__ __volatile__("" ::: "memory")

namespace hilrig {

// The hardware, as the bridge sees it.
class Port {
public:
    virtual ~Port() {}
    // Bytes that can be written right now without blocking (Serial.availableForWrite()).
    virtual size_t availableForWrite() = 0;
    // Write n bytes; only called with n <= availableForWrite(). Returns bytes written.
    virtual size_t write(const uint8_t *data, size_t n) = 0;
    // Microseconds since boot, 64 bit (never wraps).
    virtual uint64_t micros64() = 0;
    // Start calling onSampleIsr() every period_us microseconds; false if impossible.
    virtual bool startSampling(uint32_t period_us) = 0;
    // Stop the sample timer; once it returns, onSampleIsr() is not called any more.
    virtual void stopSampling() = 0;
    // Drive the release output active or inactive (SPEC 4.4 RELEASE). Called from the
    // main loop and from onSampleIsr(). Boards without one keep the default.
    virtual void setReleaseOutput(bool active) { (void)active; }
    // Hold off onSampleIsr() between these two calls (mask the sample timer interrupt),
    // for a few instructions: RELEASE needs the output and the next sample index to
    // change together. The defaults suit a port whose onSampleIsr() cannot interrupt the
    // main loop.
    virtual void lockSampling() {}
    virtual void unlockSampling() {}
};

struct BridgeConfig {
    uint32_t default_rate_hz;  // INFO.sample_rate_hz before any START (10000)
    uint32_t max_rate_hz;      // highest rate START accepts
    uint32_t counts_per_rev_0; // arm encoder (40000)
    uint32_t counts_per_rev_1; // pendulum encoder (40000)
    uint32_t cycles_per_us;    // rate of the cycle counter given to onSampleIsr (600)
    uint64_t boot_id;          // random per power-up (SPEC 4.1)
    const char *firmware_id;   // UTF-8, at most 64 bytes (longer is cut)
    // Release output (protocol 1.1). Default: none, so INFO advertises no capability and
    // RELEASE gets NAK 5.
    bool release_output = false;    // the port drives a latch/solenoid (setReleaseOutput)
    uint32_t release_pulse_ms = 50; // RELEASE with pulse_ms 0
    uint32_t release_max_ms = 1000; // longer requests are cut to this (coil duty limit)
};

// One ring entry: a sample as taken by the ISR.
struct SampleEntry {
    uint32_t index;  // sample index since START (SPEC 4.3)
    int32_t arm;     // absolute counts since the last ZERO
    int32_t pendulum;
    uint16_t flags;  // HILRIG_FLAG_* that belong to this sample
};

// Counters of the current streaming session (reset at START), as sent in STATUS.
struct BridgeCounters {
    uint32_t samples_taken;   // ISR runs since START
    uint32_t frames_dropped;  // whole frames not sent (no room in the USB buffer)
    uint32_t samples_dropped; // samples in those frames + samples lost to a full ring
    uint32_t overruns;        // late samples (timer overruns)
    uint32_t illegal_0;       // samples with an illegal quadrature transition, arm
    uint32_t illegal_1;       // ... pendulum
};

class Bridge {
public:
    static const uint16_t kMaxSamplesPerFrame = 10; // INFO.max_samples_per_frame
    static const uint32_t kStatusPeriodUs = 1000000;
    // SPEC 6: room the stream leaves for four ACK/NAK frames (wire: frame, COBS, delimiter)
    static const size_t kReplyReserve = 4 * (HILRIG_FRAME_OVERHEAD + HILRIG_ACK_SIZE + 2);

    // ring: caller-provided storage of ring_size entries, ring_size a power of two.
    Bridge(Port &port, const BridgeConfig &cfg, SampleEntry *ring, uint32_t ring_size)
        : port_(port), cfg_(cfg), ring_(ring), ring_mask_(ring_size - 1u)
    {
        hilrig_rx_init(&rx_);
        rate_hz_ = cfg.default_rate_hz;
        spf_ = samplesPerFrameFor(rate_hz_);
    }

    // ---- main loop side ------------------------------------------------------------

    // Bytes received from the host, any chunking (SPEC 1: COBS frames).
    void onReceive(const uint8_t *data, size_t n)
    {
        while (n > 0) {
            hilrig_frame_t f;
            size_t used = 0;
            if (hilrig_rx_feed(&rx_, data, n, &used, &f) == HILRIG_RX_FRAME) {
                handleFrame(f);
            }
            data += used;
            n -= used;
        }
    }

    // Call as often as possible: moves samples from the ring into SAMPLES frames and
    // sends STATUS about once a second while streaming.
    void poll()
    {
        uint64_t now = port_.micros64();
        if (!streaming_) {
            return;
        }
        drainRing();
        if (now - last_status_us_ >= kStatusPeriodUs) {
            last_status_us_ = now;
            sendStatus();
        }
    }

    // The host went away (e.g. DTR dropped): stop streaming and wait for a new HELLO.
    void closeSession()
    {
        stopStreaming(false);
        session_open_ = false;
    }

    // ---- sample timer ISR side -------------------------------------------------------

    // One sample: raw hardware counts of both decoders, the free-running cycle counter
    // when the sample was taken, and whether each decoder saw an illegal transition
    // (both phases changing at once) since the previous sample. Never blocks.
    void onSampleIsr(int32_t raw0, int32_t raw1, uint32_t cycles, bool illegal0, bool illegal1)
    {
        if (!sampling_) {
            return;
        }
        uint32_t k = next_index_;
        uint16_t flags = 0;
        if (!have_timing_) {
            have_timing_ = true; // sample 0 defines the time grid
            expected_cycles_ = cycles;
        } else {
            // SPEC 4.3: sample k is taken at k / rate after START. A timer interrupt held
            // off by a whole period merges ticks: skip their indices so the index keeps
            // naming the time, flag the sample late, count an overrun.
            expected_cycles_ += period_cycles_;
            int32_t late = (int32_t)(cycles - expected_cycles_);
            if (late >= (int32_t)period_cycles_) {
                uint32_t skip = (uint32_t)late / period_cycles_;
                k += skip;
                expected_cycles_ += skip * period_cycles_;
                late -= (int32_t)(skip * period_cycles_);
                flags |= HILRIG_FLAG_LATE_SAMPLE;
            }
            if (late > (int32_t)(period_cycles_ / 2u)) {
                flags |= HILRIG_FLAG_LATE_SAMPLE;
            }
            if (flags & HILRIG_FLAG_LATE_SAMPLE) {
                bump(counters_.overruns);
            }
        }
        // End of a RELEASE pulse, by sample index (the index names the time, even across
        // skipped ticks). Sample k itself was read with the output still driven.
        if (release_on_ && (int32_t)(k - release_end_) >= 0) {
            port_.setReleaseOutput(false);
            release_on_ = false;
        }
        if (zero_pending_) { // ZERO: both counters become 0 at the next sample
            zero0_ = raw0;
            zero1_ = raw1;
            zero_pending_ = false;
        }
        if (illegal0) {
            flags |= HILRIG_FLAG_ILLEGAL_TRANSITION_0;
            bump(counters_.illegal_0);
        }
        if (illegal1) {
            flags |= HILRIG_FLAG_ILLEGAL_TRANSITION_1;
            bump(counters_.illegal_1);
        }
        bump(counters_.samples_taken);
        next_index_ = k + 1u;

        uint32_t head = ring_head_;
        if (head - ring_tail_ > ring_mask_) { // full: drop this sample, mark the gap
            bump(ring_lost_);
            ring_gap_ = true;
            return;
        }
        if (ring_gap_) {
            flags |= HILRIG_FLAG_DEVICE_OVERRUN; // samples right before this one were dropped
            ring_gap_ = false;
        }
        SampleEntry &e = ring_[head & ring_mask_];
        e.index = k;
        e.arm = wrapSub(raw0, zero0_);
        e.pendulum = wrapSub(raw1, zero1_);
        e.flags = flags;
        HILRIG_COMPILER_BARRIER();
        ring_head_ = head + 1u;
    }

    // ---- introspection ---------------------------------------------------------------

    bool sessionOpen() const { return session_open_; }
    bool streaming() const { return streaming_; }
    uint32_t rateHz() const { return rate_hz_; }
    uint16_t samplesPerFrame() const { return spf_; }
    uint32_t nextSampleIndex() const { return next_index_; }
    bool releaseOutputActive() const { return release_on_; }
    BridgeCounters counters() const
    {
        BridgeCounters c;
        c.samples_taken = counters_.samples_taken;
        c.frames_dropped = counters_.frames_dropped;
        c.samples_dropped = counters_.samples_dropped + ring_lost_;
        c.overruns = counters_.overruns;
        c.illegal_0 = counters_.illegal_0;
        c.illegal_1 = counters_.illegal_1;
        return c;
    }
    const hilrig_rx_stats_t &rxStats() const { return rx_.stats; }

    // Rates START accepts: 1 .. max_rate_hz with a whole number of microseconds per
    // sample (the IntervalTimer period), e.g. 10000, 5000, 2000, 1000, 500, 100.
    bool rateSupported(uint32_t hz) const
    {
        return hz >= 1u && hz <= cfg_.max_rate_hz && 1000000u % hz == 0u;
    }

    // About one SAMPLES frame per millisecond: 10 samples at 10 kHz, 1 at <= 1 kHz.
    static uint16_t samplesPerFrameFor(uint32_t hz)
    {
        uint32_t n = hz / 1000u;
        if (n < 1u) n = 1u;
        if (n > kMaxSamplesPerFrame) n = kMaxSamplesPerFrame;
        return (uint16_t)n;
    }

private:
    // x + 1 without ++ on a volatile (deprecated in C++20).
    static void bump(volatile uint32_t &x) { x = x + 1u; }

    // a - b modulo 2^32, as int32 (no signed overflow).
    static int32_t wrapSub(int32_t a, int32_t b)
    {
        uint32_t d = (uint32_t)a - (uint32_t)b;
        uint8_t le[4];
        hilrig_put_u32(le, d);
        return hilrig_get_i32(le);
    }

    // SPEC 4.4: every host frame is answered by ACK or NAK (HELLO by INFO).
    void handleFrame(const hilrig_frame_t &f)
    {
        int rc = hilrig_rx_check_message(&rx_, &f);
        if (!session_open_) {
            // SPEC 5.1: the device sends nothing until it receives HELLO.
            if (f.msg_type != HILRIG_MSG_HELLO || rc != HILRIG_OK) {
                return;
            }
        }
        if (f.msg_type == HILRIG_MSG_HELLO) {
            hilrig_rx_reset_seq(&rx_); // the host's counter starts with this frame
        }
        hilrig_rx_track_seq(&rx_, f.seq);
        if (rc == HILRIG_E_UNKNOWN_TYPE || (f.msg_type & 0x80u) != 0u) {
            sendNak(f, HILRIG_NAK_UNKNOWN_TYPE, 0); // incl. device-to-host types
            return;
        }
        if (rc != HILRIG_OK) {
            sendNak(f, HILRIG_NAK_BAD_PAYLOAD, f.payload_len);
            return;
        }
        switch (f.msg_type) {
        case HILRIG_MSG_HELLO: onHello(); break;
        case HILRIG_MSG_START: onStart(f); break;
        case HILRIG_MSG_STOP: onStop(f); break;
        case HILRIG_MSG_ZERO:
            zero_pending_ = true; // taken by the next sample (now, or after START)
            sendAck(f, 0);
            break;
        case HILRIG_MSG_PING: sendAck(f, hilrig_get_u32(f.payload)); break;
        case HILRIG_MSG_RELEASE: onRelease(f); break;
        default: sendNak(f, HILRIG_NAK_UNKNOWN_TYPE, 0); break;
        }
    }

    // SPEC 5.2: answer INFO and restart the send seq; INFO itself carries seq 0. A HELLO
    // while streaming starts a new session: streaming stops, queued samples are dropped.
    void onHello()
    {
        stopStreaming(false);
        session_open_ = true;
        tx_seq_ = 0;
        uint8_t p[HILRIG_INFO_MAX_SIZE];
        hilrig_info_t info;
        size_t id_len = 0;
        while (cfg_.firmware_id && cfg_.firmware_id[id_len] && id_len < HILRIG_INFO_MAX_ID) {
            id_len++;
        }
        info.proto_major = (uint8_t)HILRIG_VERSION_MAJOR;
        info.proto_minor = (uint8_t)HILRIG_VERSION_MINOR;
        info.capabilities = (uint16_t)(cfg_.release_output ? HILRIG_CAP_RELEASE_OUTPUT : 0u);
        info.sample_rate_hz = rate_hz_;
        info.counts_per_rev_0 = cfg_.counts_per_rev_0;
        info.counts_per_rev_1 = cfg_.counts_per_rev_1;
        info.layout_hash = HILRIG_LAYOUT_HASH;
        info.boot_id = cfg_.boot_id;
        info.max_samples_per_frame = kMaxSamplesPerFrame;
        info.device_us_at_boot = 0; // reserved (SPEC 4.1)
        info.firmware_id = (const uint8_t *)cfg_.firmware_id;
        info.firmware_id_len = id_len;
        size_t n = hilrig_build_info(p, sizeof p, &info);
        sendFrame(HILRIG_MSG_INFO, 0, 0, 0, p, n);
    }

    void onStart(const hilrig_frame_t &f)
    {
        uint32_t hz = hilrig_get_u32(f.payload);
        if (streaming_) {
            sendNak(f, HILRIG_NAK_NOT_ALLOWED, rate_hz_);
            return;
        }
        if (!rateSupported(hz)) {
            sendNak(f, HILRIG_NAK_UNSUPPORTED_RATE, hz);
            return;
        }
        // A new streaming session: indices restart at 0, counters at 0.
        rate_hz_ = hz;
        spf_ = samplesPerFrameFor(hz);
        period_cycles_ = (1000000u / hz) * cfg_.cycles_per_us;
        next_index_ = 0;
        have_timing_ = false;
        ring_head_ = 0;
        ring_tail_ = 0;
        ring_lost_ = 0;
        ring_gap_ = false;
        batch_n_ = 0;
        pending_overrun_ = false;
        counters_.samples_taken = 0;
        counters_.frames_dropped = 0;
        counters_.samples_dropped = 0;
        counters_.overruns = 0;
        counters_.illegal_0 = 0;
        counters_.illegal_1 = 0;
        last_status_us_ = port_.micros64();
        sampling_ = true;
        HILRIG_COMPILER_BARRIER();
        if (!port_.startSampling(1000000u / hz)) { // no timer free
            sampling_ = false;
            sendNak(f, HILRIG_NAK_NOT_ALLOWED, hz);
            return;
        }
        streaming_ = true;
        // The ACK still precedes every SAMPLES frame: the ISR only fills the ring, and
        // frames are made from it in poll().
        sendAck(f, hz);
    }

    // SPEC 5.4: stop, send what is left, a last STATUS, then ACK (value: the index of the
    // next sample, i.e. how many sample slots the session had).
    void onStop(const hilrig_frame_t &f)
    {
        stopStreaming(true);
        sendAck(f, next_index_);
    }

    // SPEC 4.4 (1.1): drive the release output for pulse_ms (0: the configured default,
    // longer than release_max_ms: cut to it), rounded up to whole sample periods; ACK with
    // the index of the first sample taken with the output driven. A RELEASE during a pulse
    // restarts it from the next sample. NAK 5 without an output, NAK 3 when not streaming
    // (the ISR that ends the pulse only runs while streaming).
    void onRelease(const hilrig_frame_t &f)
    {
        if (!cfg_.release_output) {
            sendNak(f, HILRIG_NAK_NO_RELEASE_OUTPUT, 0);
            return;
        }
        if (!streaming_) {
            sendNak(f, HILRIG_NAK_NOT_ALLOWED, 0);
            return;
        }
        uint32_t ms = hilrig_get_u32(f.payload);
        if (ms == 0u) {
            ms = cfg_.release_pulse_ms;
        }
        if (ms > cfg_.release_max_ms) {
            ms = cfg_.release_max_ms;
        }
        uint64_t n = ((uint64_t)ms * rate_hz_ + 999u) / 1000u;
        if (n < 1u) {
            n = 1u;
        }
        if (n > 0x7FFFFFFFu) {
            n = 0x7FFFFFFFu; // the ISR compares indices as a signed difference
        }
        // Locked, so no sample falls between driving the output and reading the index:
        // the next sample taken is the first one with the output driven.
        port_.lockSampling();
        uint32_t first = next_index_;
        release_end_ = first + (uint32_t)n;
        release_on_ = true;
        port_.setReleaseOutput(true);
        port_.unlockSampling();
        sendAck(f, first);
    }

    void stopStreaming(bool flush)
    {
        if (!streaming_) {
            return;
        }
        port_.stopSampling();
        sampling_ = false;
        HILRIG_COMPILER_BARRIER();
        if (release_on_) { // the ISR that would end the pulse no longer runs
            port_.setReleaseOutput(false);
            release_on_ = false;
        }
        if (flush) {
            drainRing();
            flushBatch();
            sendStatus();
        } else {
            ring_tail_ = ring_head_;
            batch_n_ = 0;
        }
        streaming_ = false;
    }

    // Ring -> batches. A batch ends when full or when the next index is not contiguous
    // (a dropped or skipped sample), so every frame holds consecutive samples.
    void drainRing()
    {
        uint32_t head = ring_head_;
        HILRIG_COMPILER_BARRIER();
        uint32_t tail = ring_tail_;
        while (tail != head) {
            const SampleEntry &e = ring_[tail & ring_mask_];
            if (batch_n_ > 0 && e.index != batch_first_ + batch_n_) {
                flushBatch();
            }
            if (batch_n_ == 0) {
                batch_first_ = e.index;
                batch_flags_ = 0;
            }
            hilrig_put_sample(batch_payload_, batch_n_, e.arm, e.pendulum);
            batch_flags_ = (uint16_t)(batch_flags_ | e.flags);
            batch_n_++;
            tail++;
            HILRIG_COMPILER_BARRIER();
            ring_tail_ = tail; // free the slot for the ISR
            if (batch_n_ >= spf_) {
                flushBatch();
            }
        }
    }

    void flushBatch()
    {
        if (batch_n_ == 0) {
            return;
        }
        uint16_t flags = batch_flags_;
        if (pending_overrun_) {
            flags |= HILRIG_FLAG_DEVICE_OVERRUN; // an earlier frame was dropped
        }
        bool sent = sendFrame(HILRIG_MSG_SAMPLES, flags, batch_first_, batch_n_, batch_payload_,
                              (size_t)batch_n_ * HILRIG_SAMPLE_SIZE, kReplyReserve);
        pending_overrun_ = !sent;
        batch_n_ = 0;
    }

    // SPEC 4.2. first_sample is the index of the next sample to be taken.
    void sendStatus()
    {
        uint8_t p[HILRIG_STATUS_SIZE];
        BridgeCounters c = counters();
        hilrig_status_t s;
        s.device_us = port_.micros64();
        s.samples_taken = c.samples_taken;
        s.frames_dropped = c.frames_dropped;
        s.samples_dropped = c.samples_dropped;
        s.overruns = c.overruns;
        s.illegal_0 = c.illegal_0;
        s.illegal_1 = c.illegal_1;
        size_t n = hilrig_build_status(p, &s);
        sendFrame(HILRIG_MSG_STATUS, 0, next_index_, 0, p, n, kReplyReserve);
    }

    void sendAck(const hilrig_frame_t &f, uint32_t value)
    {
        uint8_t p[HILRIG_ACK_SIZE];
        size_t n = hilrig_build_ack(p, f.seq, f.msg_type, value);
        sendFrame(HILRIG_MSG_ACK, 0, 0, 0, p, n);
    }

    void sendNak(const hilrig_frame_t &f, uint8_t reason, uint32_t value)
    {
        uint8_t p[HILRIG_NAK_SIZE];
        size_t n = hilrig_build_nak(p, f.seq, f.msg_type, reason, value);
        sendFrame(HILRIG_MSG_NAK, 0, 0, 0, p, n);
    }

    // Encode and send one whole frame, or drop and count it: never a partial frame.
    // Every frame takes a seq, sent or not, so the host sees a dropped frame as a seq
    // gap (its lost_frames) as well as in STATUS.frames_dropped. `reserve`: bytes that
    // must stay free after it (the stream's frames keep them for replies).
    bool sendFrame(uint8_t type, uint16_t flags, uint32_t first_sample, uint16_t n_samples,
                   const uint8_t *payload, size_t payload_len, size_t reserve = 0)
    {
        uint32_t seq = tx_seq_++;
        size_t n = hilrig_encode_frame(tx_buf_, sizeof tx_buf_, type, flags, seq, first_sample,
                                       n_samples, payload, payload_len);
        if (n > 0 && port_.availableForWrite() >= n + reserve && port_.write(tx_buf_, n) == n) {
            return true;
        }
        bump(counters_.frames_dropped);
        counters_.samples_dropped = counters_.samples_dropped + n_samples;
        return false;
    }

    Port &port_;
    BridgeConfig cfg_;
    hilrig_rx_t rx_;
    uint8_t tx_buf_[HILRIG_MAX_WIRE];

    bool session_open_ = false;
    bool streaming_ = false;
    uint32_t tx_seq_ = 0;
    uint32_t rate_hz_ = 0;
    uint16_t spf_ = 1;
    uint64_t last_status_us_ = 0;

    // batch being filled (main loop only)
    uint8_t batch_payload_[kMaxSamplesPerFrame * HILRIG_SAMPLE_SIZE];
    uint32_t batch_first_ = 0;
    uint16_t batch_n_ = 0;
    uint16_t batch_flags_ = 0;
    bool pending_overrun_ = false;

    // shared with the ISR
    SampleEntry *ring_;
    uint32_t ring_mask_;
    volatile uint32_t ring_head_ = 0; // written by the ISR
    volatile uint32_t ring_tail_ = 0; // written by the main loop
    volatile uint32_t ring_lost_ = 0; // samples dropped because the ring was full
    volatile bool ring_gap_ = false;
    volatile bool sampling_ = false;
    volatile bool zero_pending_ = false;
    volatile uint32_t next_index_ = 0;
    volatile bool release_on_ = false;  // the release output is driven
    volatile uint32_t release_end_ = 0; // sample index at which the ISR turns it off
    bool have_timing_ = false;
    uint32_t expected_cycles_ = 0;
    uint32_t period_cycles_ = 1;
    int32_t zero0_ = 0;
    int32_t zero1_ = 0;
    struct {
        volatile uint32_t samples_taken, frames_dropped, samples_dropped, overruns, illegal_0,
            illegal_1;
    } counters_ = {0, 0, 0, 0, 0, 0};
};

} // namespace hilrig

#endif // HILRIG_BRIDGE_H
