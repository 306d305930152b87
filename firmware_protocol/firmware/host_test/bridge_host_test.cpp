// Host test of the firmware's protocol/session logic (src/bridge.h) with a fake Teensy:
// a fake USB serial port (with a settable availableForWrite), a fake sample timer (the
// test calls onSampleIsr itself, with chosen counts and cycle stamps) and a fake clock.
// Everything the "device" writes is decoded with the tested receiver of hilrig_proto.h.
// The fake port also has a release output (protocol 1.1 RELEASE) whose level the test
// reads at every sample.
//
// Built and run by tests/firmware_protocol/test_c_reference.py:
//   g++ -std=gnu++17 -Wall -Wextra -Werror -pedantic -I../../c -I../src bridge_host_test.cpp
#include <stdio.h>
#include <string.h>

#include <functional>
#include <string>
#include <vector>

#include "bridge.h"

static unsigned long g_checks = 0, g_failures = 0;

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

static const uint32_t kCyclesPerUs = 600; // a Teensy 4.x at 600 MHz

class FakePort : public hilrig::Port {
public:
    std::vector<uint8_t> out;
    size_t room = 1u << 20;  // availableForWrite()
    uint64_t now_us = 1000;  // micros64()
    bool sampling = false;
    uint32_t period_us = 0;
    bool partial_write = false; // a write attempt with n > availableForWrite()
    bool release_level = false;    // the release output is driven
    int release_on_writes = 0;     // setReleaseOutput(true) calls
    int release_off_writes = 0;    // setReleaseOutput(false) calls
    int release_on_unlocked = 0;   // ... driven while the sample ISR was not locked out
    int lock_depth = 0;
    std::function<void()> held_tick; // a timer tick that arrives while locked: runs at unlock

    size_t availableForWrite() override { return room; }
    size_t write(const uint8_t *data, size_t n) override
    {
        if (n > room) {
            partial_write = true;
            n = room;
        }
        out.insert(out.end(), data, data + n);
        room -= n;
        return n;
    }
    uint64_t micros64() override { return now_us; }
    bool startSampling(uint32_t us) override
    {
        sampling = true;
        period_us = us;
        return true;
    }
    void stopSampling() override { sampling = false; }
    void setReleaseOutput(bool active) override
    {
        if (active) {
            release_on_writes++;
            release_on_unlocked += lock_depth == 0;
        } else {
            release_off_writes++;
        }
        release_level = active;
    }
    void lockSampling() override { lock_depth++; }
    void unlockSampling() override
    {
        lock_depth--;
        if (lock_depth == 0 && held_tick) {
            std::function<void()> tick = held_tick;
            held_tick = nullptr;
            tick();
        }
    }
};

struct Msg {
    hilrig_frame_t f;
    std::vector<uint8_t> payload;
};

// The host side: decodes what the device wrote since the last call.
struct Host {
    FakePort &port;
    hilrig::Bridge &bridge;
    hilrig_rx_t rx;
    size_t read_pos = 0;
    uint32_t seq = 0; // host -> device seq

    Host(FakePort &p, hilrig::Bridge &b) : port(p), bridge(b) { hilrig_rx_init(&rx); }

    std::vector<Msg> take()
    {
        std::vector<Msg> msgs;
        for (; read_pos < port.out.size(); read_pos++) {
            hilrig_frame_t f;
            if (hilrig_rx_push(&rx, port.out[read_pos], &f) == HILRIG_RX_FRAME) {
                Msg m;
                m.f = f;
                m.payload.assign(f.payload, f.payload + f.payload_len);
                m.f.payload = nullptr;
                CHECK(hilrig_check_message(&f) == HILRIG_OK, "device sent a bad message %02x",
                      f.msg_type);
                if (f.msg_type == HILRIG_MSG_INFO) hilrig_rx_reset_seq(&rx);
                hilrig_rx_track_seq(&rx, f.seq);
                msgs.push_back(m);
            }
        }
        return msgs;
    }

    uint32_t send(uint8_t type, const uint8_t *payload = nullptr, size_t n = 0)
    {
        uint8_t wire[HILRIG_MAX_WIRE];
        uint32_t s = seq++;
        size_t wn = hilrig_encode_frame(wire, sizeof wire, type, 0, s, 0, 0, payload, n);
        // deliver in two odd pieces, as USB might
        size_t cut = wn / 3;
        bridge.onReceive(wire, cut);
        bridge.onReceive(wire + cut, wn - cut);
        return s;
    }
    uint32_t sendU32(uint8_t type, uint32_t v)
    {
        uint8_t p[4];
        hilrig_put_u32(p, v);
        return send(type, p, 4);
    }
};

static bool isAck(const Msg &m, uint32_t acked_seq, uint8_t type, uint32_t value)
{
    hilrig_reply_t r;
    return m.f.msg_type == HILRIG_MSG_ACK &&
           hilrig_parse_ack(m.payload.data(), m.payload.size(), &r) == HILRIG_OK &&
           r.acked_seq == acked_seq && r.acked_type == type && r.value == value;
}

static bool isNak(const Msg &m, uint32_t acked_seq, uint8_t type, uint8_t reason, uint32_t value)
{
    hilrig_reply_t r;
    return m.f.msg_type == HILRIG_MSG_NAK &&
           hilrig_parse_nak(m.payload.data(), m.payload.size(), &r) == HILRIG_OK &&
           r.acked_seq == acked_seq && r.acked_type == type && r.reason == reason &&
           r.value == value;
}

// The simulated encoders: arm counts 3 per sample, pendulum -1 per sample.
struct Sim {
    hilrig::Bridge &bridge;
    uint32_t tick = 0;    // timer ticks since START
    uint32_t cycles = 12345;
    int32_t raw0 = 1000, raw1 = -5;

    // One timer tick; the ISR runs `delay_ticks` periods late (0 = on time).
    void sample(double delay_ticks = 0.0, bool ill0 = false, bool ill1 = false)
    {
        uint32_t period = 100u * kCyclesPerUs;
        uint32_t at = cycles + tick * period + (uint32_t)(delay_ticks * period);
        raw0 += 3;
        raw1 -= 1;
        bridge.onSampleIsr(raw0, raw1, at, ill0, ill1);
        tick += 1u + (uint32_t)delay_ticks; // ticks merged into a late interrupt are gone
    }
};

// All SAMPLES in msgs, flattened: (index, arm, pendulum), plus frame flags per frame.
struct Flat {
    std::vector<uint32_t> index;
    std::vector<int32_t> arm, pend;
    std::vector<uint16_t> frame_flags;
    std::vector<uint32_t> frame_first;
};

static Flat flatten(const std::vector<Msg> &msgs)
{
    Flat fl;
    for (const Msg &m : msgs) {
        if (m.f.msg_type != HILRIG_MSG_SAMPLES) continue;
        fl.frame_flags.push_back(m.f.flags);
        fl.frame_first.push_back(m.f.first_sample);
        for (size_t i = 0; i < m.f.n_samples; i++) {
            int32_t a, b;
            hilrig_get_sample(m.payload.data(), i, &a, &b);
            fl.index.push_back(m.f.first_sample + (uint32_t)i);
            fl.arm.push_back(a);
            fl.pend.push_back(b);
        }
    }
    return fl;
}

static size_t count(const std::vector<Msg> &msgs, uint8_t type)
{
    size_t n = 0;
    for (const Msg &m : msgs) n += m.f.msg_type == type;
    return n;
}

// The lab rig's configuration (10 kHz, 40,000 counts/rev) under a test's own identity.
static hilrig::BridgeConfig labConfig(uint64_t boot_id, const char *firmware_id)
{
    hilrig::BridgeConfig cfg;
    cfg.default_rate_hz = 10000;
    cfg.max_rate_hz = 20000;
    cfg.counts_per_rev_0 = 40000;
    cfg.counts_per_rev_1 = 40000;
    cfg.cycles_per_us = kCyclesPerUs;
    cfg.boot_id = boot_id;
    cfg.firmware_id = firmware_id;
    return cfg;
}

static void test_session()
{
    static hilrig::SampleEntry ring[64];
    FakePort port;
    hilrig::BridgeConfig cfg = labConfig(0x1122334455667788ULL, "hilrig-teensy41/host-test");
    hilrig::Bridge bridge(port, cfg, ring, 64);
    Host host(port, bridge);
    std::vector<Msg> msgs;

    // SPEC 5.1: nothing before HELLO, whatever arrives
    host.sendU32(HILRIG_MSG_PING, 1);
    host.sendU32(HILRIG_MSG_START, 10000);
    bridge.poll();
    CHECK(port.out.empty() && !bridge.sessionOpen(), "device spoke before HELLO");

    // HELLO -> INFO with seq 0
    host.seq = 0;
    uint32_t s = host.send(HILRIG_MSG_HELLO);
    msgs = host.take();
    CHECK(msgs.size() == 1 && msgs[0].f.msg_type == HILRIG_MSG_INFO && msgs[0].f.seq == 0,
          "INFO after HELLO (%zu msgs)", msgs.size());
    if (msgs.size() == 1) {
        hilrig_info_t info;
        CHECK(hilrig_parse_info(msgs[0].payload.data(), msgs[0].payload.size(), &info) == HILRIG_OK,
              "INFO parses");
        CHECK(info.proto_major == 1 && info.proto_minor == HILRIG_VERSION_MINOR &&
                  info.capabilities == 0 && info.sample_rate_hz == 10000 &&
                  info.counts_per_rev_0 == 40000 && info.counts_per_rev_1 == 40000 &&
                  info.layout_hash == HILRIG_LAYOUT_HASH && info.boot_id == cfg.boot_id &&
                  info.max_samples_per_frame == 10 &&
                  std::string((const char *)info.firmware_id, info.firmware_id_len) ==
                      cfg.firmware_id,
              "INFO fields");
    }

    // PING, errors
    s = host.sendU32(HILRIG_MSG_PING, 0xCAFEF00Du);
    msgs = host.take();
    CHECK(msgs.size() == 1 && isAck(msgs[0], s, HILRIG_MSG_PING, 0xCAFEF00Du) && msgs[0].f.seq == 1,
          "PING -> ACK(token)");
    s = host.send(0x42);
    msgs = host.take();
    CHECK(msgs.size() == 1 && isNak(msgs[0], s, 0x42, HILRIG_NAK_UNKNOWN_TYPE, 0), "NAK 1");
    s = host.send(HILRIG_MSG_INFO, (const uint8_t *)"0123456789012345678901234567890123456789abcd", 44);
    msgs = host.take();
    CHECK(msgs.size() == 1 && isNak(msgs[0], s, HILRIG_MSG_INFO, HILRIG_NAK_UNKNOWN_TYPE, 0),
          "device type from the host -> NAK 1");
    s = host.send(HILRIG_MSG_PING, (const uint8_t *)"abc", 3);
    msgs = host.take();
    CHECK(msgs.size() == 1 && isNak(msgs[0], s, HILRIG_MSG_PING, HILRIG_NAK_BAD_PAYLOAD, 3), "NAK 2");
    s = host.sendU32(HILRIG_MSG_START, 12345);
    msgs = host.take();
    CHECK(msgs.size() == 1 && isNak(msgs[0], s, HILRIG_MSG_START, HILRIG_NAK_UNSUPPORTED_RATE, 12345),
          "NAK 4");
    s = host.sendU32(HILRIG_MSG_START, 0);
    msgs = host.take();
    CHECK(msgs.size() == 1 && isNak(msgs[0], s, HILRIG_MSG_START, HILRIG_NAK_UNSUPPORTED_RATE, 0),
          "NAK 4 for 0 Hz");
    s = host.send(HILRIG_MSG_STOP);
    msgs = host.take();
    CHECK(msgs.size() == 1 && isAck(msgs[0], s, HILRIG_MSG_STOP, 0), "STOP when idle -> ACK");

    // ZERO while idle: applies to the first sample after START
    s = host.send(HILRIG_MSG_ZERO);
    msgs = host.take();
    CHECK(msgs.size() == 1 && isAck(msgs[0], s, HILRIG_MSG_ZERO, 0), "ZERO -> ACK");

    // START 10 kHz -> ACK, timer armed at 100 us
    s = host.sendU32(HILRIG_MSG_START, 10000);
    msgs = host.take();
    CHECK(msgs.size() == 1 && isAck(msgs[0], s, HILRIG_MSG_START, 10000), "START -> ACK");
    CHECK(port.sampling && port.period_us == 100 && bridge.streaming(), "timer armed");
    CHECK(bridge.samplesPerFrame() == 10, "10 samples per frame");
    s = host.sendU32(HILRIG_MSG_START, 10000);
    msgs = host.take();
    CHECK(msgs.size() == 1 && isNak(msgs[0], s, HILRIG_MSG_START, HILRIG_NAK_NOT_ALLOWED, 10000),
          "START while streaming -> NAK 3");

    // 45 samples, polled every 7: 4 frames of 10, contiguous, zeroed at sample 0
    Sim sim{bridge};
    for (int i = 0; i < 45; i++) {
        sim.sample();
        if (i % 7 == 6) bridge.poll();
    }
    bridge.poll();
    msgs = host.take();
    Flat fl = flatten(msgs);
    CHECK(count(msgs, HILRIG_MSG_SAMPLES) == 4 && fl.index.size() == 40, "4 frames of 10 (%zu)",
          fl.index.size());
    for (size_t i = 0; i < fl.index.size(); i++) {
        CHECK(fl.index[i] == i && fl.arm[i] == (int32_t)(3 * i) && fl.pend[i] == -(int32_t)i,
              "sample %zu: index %u arm %d pend %d", i, fl.index[i], fl.arm[i], fl.pend[i]);
    }
    for (uint16_t f : fl.frame_flags) CHECK(f == 0, "flags %04x", f);

    // ZERO while streaming: the next sample (index 45) reads 0, 0
    host.send(HILRIG_MSG_ZERO);
    host.take();
    for (int i = 0; i < 15; i++) sim.sample(); // 45..59
    bridge.poll();
    fl = flatten(host.take());
    CHECK(fl.index.size() == 20 && fl.index[0] == 40 && fl.index[19] == 59, "40..59");
    if (fl.index.size() == 20) {
        CHECK(fl.arm[4] == 3 * 44 && fl.arm[5] == 0 && fl.pend[5] == 0 && fl.arm[6] == 3 &&
                  fl.pend[6] == -1,
              "ZERO at sample 45: %d %d %d", fl.arm[4], fl.arm[5], fl.arm[6]);
    }

    // a late interrupt (2.3 periods) merges ticks: indices skip, the sample is flagged
    for (int i = 0; i < 5; i++) sim.sample(); // 60..64
    sim.sample(2.3);                         // tick 65 served 2.3 periods late: index 67
    for (int i = 0; i < 3; i++) sim.sample(); // 68, 69, 70
    sim.sample(0.7);                         // 71, 0.7 periods late: flagged, not skipped
    for (int i = 0; i < 8; i++) sim.sample(); // 72..79
    bridge.poll();
    fl = flatten(host.take());
    {
        std::vector<uint32_t> want;
        for (uint32_t k = 60; k <= 64; k++) want.push_back(k);
        for (uint32_t k = 67; k <= 76; k++) want.push_back(k);
        CHECK(fl.index == want, "indices around a late interrupt (%zu)", fl.index.size());
        // frames: 60-64 (cut at the gap), 67-76 (LATE); 77-79 wait in the batch
        CHECK(fl.frame_first.size() == 2 && fl.frame_first[0] == 60 && fl.frame_first[1] == 67,
              "frame cut at the gap");
        if (fl.frame_flags.size() == 2) {
            CHECK(fl.frame_flags[0] == 0 && fl.frame_flags[1] == HILRIG_FLAG_LATE_SAMPLE,
                  "LATE flag %04x", fl.frame_flags[1]);
        }
    }
    CHECK(bridge.counters().overruns == 2, "overruns %u", bridge.counters().overruns);
    CHECK(sim.tick == 80 && bridge.nextSampleIndex() == 80, "next index 80");

    // illegal transitions flag their frame
    for (int i = 0; i < 7; i++) sim.sample(0, i == 2, i == 5); // 80..86
    bridge.poll();
    msgs = host.take();
    fl = flatten(msgs);
    CHECK(fl.frame_flags.size() == 1 && fl.frame_first[0] == 77 &&
              fl.frame_flags[0] == (HILRIG_FLAG_ILLEGAL_TRANSITION_0 | HILRIG_FLAG_ILLEGAL_TRANSITION_1),
          "illegal flags");
    CHECK(bridge.counters().illegal_0 == 1 && bridge.counters().illegal_1 == 1, "illegal counters");

    // USB buffer full: whole frames are dropped and counted, seq still advances
    port.room = 50; // less than a 10-sample frame (102 bytes)
    for (int i = 0; i < 30; i++) sim.sample(); // 87..116
    bridge.poll();
    CHECK(port.room == 50, "nothing written while it does not fit");
    CHECK(bridge.counters().frames_dropped == 3 && bridge.counters().samples_dropped == 30,
          "3 frames / 30 samples dropped (%u, %u)", bridge.counters().frames_dropped,
          bridge.counters().samples_dropped);
    port.room = 1u << 20;
    for (int i = 0; i < 10; i++) sim.sample(); // 117..126
    bridge.poll();
    uint32_t lost_before = host.rx.stats.lost_frames;
    msgs = host.take();
    fl = flatten(msgs);
    CHECK(fl.frame_first.size() == 1 && fl.frame_first[0] == 117 &&
              fl.frame_flags[0] == HILRIG_FLAG_DEVICE_OVERRUN,
          "DEVICE_OVERRUN after dropped frames");
    CHECK(host.rx.stats.lost_frames == lost_before + 3, "seq gap of 3 (%u)",
          host.rx.stats.lost_frames - lost_before);

    // ring overflow (64 entries): 100 samples without a poll
    for (int i = 0; i < 100; i++) sim.sample(); // 127..226: 127..190 kept, 191..226 lost
    bridge.poll();
    fl = flatten(host.take());
    CHECK(fl.index.size() == 60 && fl.index.front() == 127 && fl.index.back() == 186,
          "ring kept 127..190, 60 sent (%zu)", fl.index.size());
    CHECK(bridge.counters().samples_dropped == 30 + 36, "ring losses counted (%u)",
          bridge.counters().samples_dropped);
    for (int i = 0; i < 10; i++) sim.sample(); // 227..236
    bridge.poll();
    msgs = host.take();
    fl = flatten(msgs);
    CHECK(fl.frame_first.size() == 2 && fl.frame_first[0] == 187 && fl.frame_flags[0] == 0 &&
              fl.frame_first[1] == 227 && fl.frame_flags[1] == HILRIG_FLAG_DEVICE_OVERRUN,
          "DEVICE_OVERRUN on the frame after the ring gap");

    // STATUS about once a second
    port.now_us += 1000000;
    bridge.poll();
    msgs = host.take();
    CHECK(count(msgs, HILRIG_MSG_STATUS) == 1, "one STATUS");
    for (const Msg &m : msgs) {
        if (m.f.msg_type != HILRIG_MSG_STATUS) continue;
        hilrig_status_t st;
        CHECK(hilrig_parse_status(m.payload.data(), m.payload.size(), &st) == HILRIG_OK &&
                  st.device_us == port.now_us && st.samples_taken == 235 &&
                  st.frames_dropped == 3 && st.samples_dropped == 66 && st.overruns == 2 &&
                  st.illegal_0 == 1 && st.illegal_1 == 1 && m.f.first_sample == 237,
              "STATUS fields: taken %u dropped %u/%u next %u", st.samples_taken,
              st.frames_dropped, st.samples_dropped, m.f.first_sample);
    }
    port.now_us += 500000;
    bridge.poll();
    CHECK(count(host.take(), HILRIG_MSG_STATUS) == 0, "no STATUS after 0.5 s");

    // a frame that does not fit is dropped whole, never written in part
    port.room = 60;
    for (int i = 0; i < 10; i++) sim.sample(); // 237..246
    bridge.poll();
    CHECK(port.room == 60 && !port.partial_write, "no partial frame");
    CHECK(bridge.counters().frames_dropped == 4, "4th dropped frame");

    // the stream never takes the room kept for replies: with less than a STATUS beside
    // the reserve free, the STATUS is dropped and a PING is still answered
    const size_t low = hilrig::Bridge::kReplyReserve + 10;
    port.room = low;
    port.now_us += 1000000;
    bridge.poll();
    CHECK(port.room == low && bridge.counters().frames_dropped == 5, "STATUS dropped");
    s = host.sendU32(HILRIG_MSG_PING, 7u);
    msgs = host.take();
    CHECK(msgs.size() == 1 && isAck(msgs[0], s, HILRIG_MSG_PING, 7u),
          "PING answered from the reserve (%zu msgs)", msgs.size());
    port.room = 1u << 20;

    // STOP: the rest of the samples, a last STATUS, then ACK(next index)
    for (int i = 0; i < 3; i++) sim.sample(); // 247..249
    s = host.send(HILRIG_MSG_STOP);
    msgs = host.take();
    CHECK(!port.sampling && !bridge.streaming(), "timer stopped");
    CHECK(msgs.size() == 3 && msgs[0].f.msg_type == HILRIG_MSG_SAMPLES &&
              msgs[0].f.first_sample == 247 && msgs[0].f.n_samples == 3 &&
              msgs[0].f.flags == HILRIG_FLAG_DEVICE_OVERRUN &&
              msgs[1].f.msg_type == HILRIG_MSG_STATUS && isAck(msgs[2], s, HILRIG_MSG_STOP, 250),
          "STOP flushes then ACKs (%zu msgs)", msgs.size());
    sim.sample(); // a stray tick after STOP is ignored
    bridge.poll();
    CHECK(host.take().empty(), "silent after STOP");

    // START again at 1 kHz: indices restart at 0, 1 sample per frame
    s = host.sendU32(HILRIG_MSG_START, 1000);
    msgs = host.take();
    CHECK(msgs.size() == 1 && isAck(msgs[0], s, HILRIG_MSG_START, 1000) && port.period_us == 1000,
          "START 1 kHz");
    CHECK(bridge.samplesPerFrame() == 1 && bridge.counters().frames_dropped == 0, "fresh session");
    Sim sim2{bridge};
    sim2.cycles = 777;
    for (int i = 0; i < 3; i++) {
        bridge.onSampleIsr(10, 20, sim2.cycles + (uint32_t)i * 1000u * kCyclesPerUs, false, false);
    }
    bridge.poll();
    fl = flatten(host.take());
    CHECK(fl.frame_first.size() == 3 && fl.frame_first[0] == 0 && fl.frame_first[2] == 2,
          "1 kHz frames");

    // HELLO while streaming: a new session, INFO with seq 0 again
    host.seq = 0;
    s = host.send(HILRIG_MSG_HELLO);
    msgs = host.take();
    CHECK(!port.sampling && !bridge.streaming(), "HELLO stops streaming");
    CHECK(msgs.size() == 1 && msgs[0].f.msg_type == HILRIG_MSG_INFO && msgs[0].f.seq == 0,
          "INFO seq 0 again");
    if (msgs.size() == 1) {
        hilrig_info_t info;
        hilrig_parse_info(msgs[0].payload.data(), msgs[0].payload.size(), &info);
        CHECK(info.sample_rate_hz == 1000, "INFO shows the current rate");
    }
    s = host.sendU32(HILRIG_MSG_PING, 5);
    msgs = host.take();
    CHECK(msgs.size() == 1 && msgs[0].f.seq == 1 && isAck(msgs[0], s, HILRIG_MSG_PING, 5),
          "seq 1 after INFO");

    // the host goes away
    bridge.closeSession();
    host.sendU32(HILRIG_MSG_PING, 6);
    CHECK(host.take().empty() && !bridge.sessionOpen(), "silent after closeSession");

    // everything the device wrote decoded cleanly
    CHECK(host.rx.stats.crc_errors + host.rx.stats.cobs_errors + host.rx.stats.oversize +
                  host.rx.stats.length_errors + host.rx.stats.unknown_version ==
              0,
          "the device's output has framing errors");
    CHECK(bridge.rxStats().crc_errors == 0 && bridge.rxStats().cobs_errors == 0,
          "the device saw framing errors");
}

static hilrig::BridgeConfig releaseConfig()
{
    hilrig::BridgeConfig cfg = labConfig(7, "hilrig-teensy4/release-test");
    cfg.release_output = true;
    cfg.release_pulse_ms = 50;
    cfg.release_max_ms = 100;
    return cfg;
}

// n ticks, on time except tick late_at (2.3 periods late: two indices skipped); returns
// the index of each sample read with the release output driven.
static std::vector<uint32_t> samplesDriven(Sim &sim, FakePort &port, int n, int late_at = -1)
{
    std::vector<uint32_t> driven;
    for (int i = 0; i < n; i++) {
        uint32_t k = sim.bridge.nextSampleIndex();
        bool late = i == late_at;
        if (late) k += 2;
        if (port.release_level) driven.push_back(k);
        sim.sample(late ? 2.3 : 0.0);
        if (i % 64 == 63) sim.bridge.poll(); // keep the ring drained
    }
    return driven;
}

static void test_release()
{
    static hilrig::SampleEntry ring[4096];
    FakePort port;
    hilrig::BridgeConfig cfg = releaseConfig();
    hilrig::Bridge bridge(port, cfg, ring, 4096);
    Host host(port, bridge);
    std::vector<Msg> msgs;
    std::vector<uint32_t> driven;

    // INFO advertises the output
    host.send(HILRIG_MSG_HELLO);
    msgs = host.take();
    CHECK(msgs.size() == 1 && msgs[0].f.msg_type == HILRIG_MSG_INFO, "INFO");
    if (msgs.size() == 1) {
        hilrig_info_t info;
        CHECK(hilrig_parse_info(msgs[0].payload.data(), msgs[0].payload.size(), &info) ==
                      HILRIG_OK &&
                  info.proto_minor == 1 && info.capabilities == HILRIG_CAP_RELEASE_OUTPUT,
              "INFO 1.1 with CAP_RELEASE_OUTPUT");
    }

    // not streaming: NAK 3, the output untouched; a wrong payload: NAK 2
    uint32_t s = host.sendU32(HILRIG_MSG_RELEASE, 5);
    msgs = host.take();
    CHECK(msgs.size() == 1 && isNak(msgs[0], s, HILRIG_MSG_RELEASE, HILRIG_NAK_NOT_ALLOWED, 0),
          "RELEASE while idle -> NAK 3");
    s = host.send(HILRIG_MSG_RELEASE, (const uint8_t *)"ab", 2);
    msgs = host.take();
    CHECK(msgs.size() == 1 && isNak(msgs[0], s, HILRIG_MSG_RELEASE, HILRIG_NAK_BAD_PAYLOAD, 2),
          "RELEASE with 2 bytes -> NAK 2");
    CHECK(port.release_on_writes == 0 && !port.release_level, "output untouched when idle");

    s = host.sendU32(HILRIG_MSG_START, 10000);
    msgs = host.take();
    CHECK(msgs.size() == 1 && isAck(msgs[0], s, HILRIG_MSG_START, 10000), "START");
    Sim sim{bridge};
    samplesDriven(sim, port, 25); // 0..24
    bridge.poll();
    host.take();

    // RELEASE 5 ms = 50 periods at 10 kHz: ACK with the next sample's index, the output
    // driven under the lock; samples 25..75 are read with it driven, the ISR turns it off
    // right after reading sample 75 (50 periods after 25)
    s = host.sendU32(HILRIG_MSG_RELEASE, 5);
    msgs = host.take();
    CHECK(msgs.size() == 1 && isAck(msgs[0], s, HILRIG_MSG_RELEASE, 25), "RELEASE -> ACK(25)");
    CHECK(port.release_level && bridge.releaseOutputActive() && port.release_on_writes == 1 &&
              port.release_on_unlocked == 0 && port.lock_depth == 0,
          "output driven, under the lock");
    driven = samplesDriven(sim, port, 60); // 25..84
    CHECK(driven.size() == 51 && driven.front() == 25 && driven.back() == 75,
          "5 ms pulse: %zu samples driven", driven.size());
    CHECK(!port.release_level && !bridge.releaseOutputActive() && port.release_off_writes == 1,
          "output off after the pulse");
    bridge.poll();
    Flat fl = flatten(host.take());
    CHECK(!fl.index.empty() && fl.index.front() == 20 && fl.index.back() == 79 &&
              fl.index.size() == 60,
          "samples flow through the pulse (%zu)", fl.index.size());
    for (uint16_t f : fl.frame_flags) CHECK(f == 0, "flags %04x", f);

    // pulse_ms 0: the configured 50 ms = 500 periods; a late interrupt inside the pulse
    // skips indices 285, 286, and the end still comes by index (time): 85 + 500 = 585
    s = host.sendU32(HILRIG_MSG_RELEASE, 0);
    msgs = host.take();
    CHECK(msgs.size() == 1 && isAck(msgs[0], s, HILRIG_MSG_RELEASE, 85), "RELEASE(0) -> ACK(85)");
    driven = samplesDriven(sim, port, 520, 200); // 85..284, 287..606
    CHECK(driven.size() == 499 && driven.front() == 85 && driven.back() == 585,
          "default pulse: %zu samples driven, last %u", driven.size(),
          driven.empty() ? 0u : driven.back());
    CHECK(bridge.nextSampleIndex() == 607 && !port.release_level, "off at 585");
    bridge.poll();
    host.take();

    // longer than release_max_ms (100): cut to 100 ms = 1000 periods
    s = host.sendU32(HILRIG_MSG_RELEASE, 60000);
    msgs = host.take();
    CHECK(msgs.size() == 1 && isAck(msgs[0], s, HILRIG_MSG_RELEASE, 607), "RELEASE(60 s)");
    driven = samplesDriven(sim, port, 1100);
    CHECK(driven.size() == 1001 && driven.back() == 1607, "cut to 100 ms: %zu driven",
          driven.size());
    bridge.poll();
    host.take();

    // a timer tick held off by the lock runs right after it: that sample is the ACK's
    // index and was read with the output driven
    uint32_t held_index = 0;
    bool held_level = false;
    port.held_tick = [&]() {
        held_index = bridge.nextSampleIndex();
        held_level = port.release_level;
        sim.sample();
    };
    s = host.sendU32(HILRIG_MSG_RELEASE, 1);
    msgs = host.take();
    CHECK(held_index == 1707 && held_level && msgs.size() == 1 &&
              isAck(msgs[0], s, HILRIG_MSG_RELEASE, 1707),
          "held-off tick: sample %u, level %d", held_index, (int)held_level);

    // a RELEASE during a pulse restarts it from the next sample
    samplesDriven(sim, port, 3); // 1708..1710
    s = host.sendU32(HILRIG_MSG_RELEASE, 1);
    msgs = host.take();
    CHECK(msgs.size() == 1 && isAck(msgs[0], s, HILRIG_MSG_RELEASE, 1711), "restart ACK");
    driven = samplesDriven(sim, port, 20);
    CHECK(driven.size() == 11 && driven.front() == 1711 && driven.back() == 1721,
          "restarted pulse ends 10 periods after 1711 (%zu)", driven.size());

    // STOP during a pulse: the output goes off at once (the ISR will not run again)
    s = host.sendU32(HILRIG_MSG_RELEASE, 50);
    host.take();
    samplesDriven(sim, port, 5);
    CHECK(port.release_level, "pulse running");
    s = host.send(HILRIG_MSG_STOP);
    msgs = host.take();
    CHECK(!port.release_level && !bridge.releaseOutputActive() && !msgs.empty() &&
              isAck(msgs.back(), s, HILRIG_MSG_STOP, bridge.nextSampleIndex()),
          "STOP ends the pulse");
    s = host.sendU32(HILRIG_MSG_RELEASE, 5);
    msgs = host.take();
    CHECK(msgs.size() == 1 && isNak(msgs[0], s, HILRIG_MSG_RELEASE, HILRIG_NAK_NOT_ALLOWED, 0),
          "RELEASE after STOP -> NAK 3");

    // HELLO and the host going away end a pulse too
    host.sendU32(HILRIG_MSG_START, 10000);
    host.sendU32(HILRIG_MSG_RELEASE, 50);
    CHECK(port.release_level, "pulse before HELLO");
    host.seq = 0;
    host.send(HILRIG_MSG_HELLO);
    CHECK(!port.release_level, "HELLO ends the pulse");
    host.sendU32(HILRIG_MSG_START, 10000);
    host.sendU32(HILRIG_MSG_RELEASE, 50);
    CHECK(port.release_level, "pulse before the host goes away");
    bridge.closeSession();
    CHECK(!port.release_level && port.lock_depth == 0 && port.release_on_unlocked == 0,
          "closeSession ends the pulse");
    host.take();
    CHECK(host.rx.stats.crc_errors + host.rx.stats.cobs_errors + host.rx.stats.length_errors ==
              0,
          "release session: framing errors");
}

// A board without a release output: the 1.0 configuration, the new fields left at their
// defaults.
static void test_no_release_output()
{
    static hilrig::SampleEntry ring[64];
    FakePort port;
    hilrig::BridgeConfig cfg = labConfig(9, "hilrig-teensy4/no-release");
    hilrig::Bridge bridge(port, cfg, ring, 64);
    Host host(port, bridge);
    std::vector<Msg> msgs;

    host.send(HILRIG_MSG_HELLO);
    msgs = host.take();
    if (msgs.size() == 1) {
        hilrig_info_t info;
        CHECK(hilrig_parse_info(msgs[0].payload.data(), msgs[0].payload.size(), &info) ==
                      HILRIG_OK &&
                  info.proto_minor == 1 && info.capabilities == 0,
              "INFO without CAP_RELEASE_OUTPUT (%04x)", info.capabilities);
    } else {
        CHECK(0, "INFO after HELLO");
    }
    uint32_t s = host.sendU32(HILRIG_MSG_RELEASE, 50);
    msgs = host.take();
    CHECK(msgs.size() == 1 &&
              isNak(msgs[0], s, HILRIG_MSG_RELEASE, HILRIG_NAK_NO_RELEASE_OUTPUT, 0),
          "idle -> NAK 5");
    host.sendU32(HILRIG_MSG_START, 10000);
    host.take();
    s = host.sendU32(HILRIG_MSG_RELEASE, 0);
    msgs = host.take();
    CHECK(msgs.size() == 1 &&
              isNak(msgs[0], s, HILRIG_MSG_RELEASE, HILRIG_NAK_NO_RELEASE_OUTPUT, 0),
          "streaming -> NAK 5");
    CHECK(bridge.streaming() && port.release_on_writes == 0 && port.release_off_writes == 0,
          "no output, still streaming");
}

static void test_rates()
{
    static hilrig::SampleEntry ring[16];
    FakePort port;
    hilrig::BridgeConfig cfg = {10000, 20000, 40000, 40000, kCyclesPerUs, 1, "x"};
    hilrig::Bridge bridge(port, cfg, ring, 16);
    CHECK(bridge.rateSupported(10000) && bridge.rateSupported(20000) &&
              bridge.rateSupported(1000) && bridge.rateSupported(1) && !bridge.rateSupported(0) &&
              !bridge.rateSupported(25000) && !bridge.rateSupported(3000) &&
              !bridge.rateSupported(40000),
          "supported rates");
    CHECK(hilrig::Bridge::samplesPerFrameFor(10000) == 10 &&
              hilrig::Bridge::samplesPerFrameFor(20000) == 10 &&
              hilrig::Bridge::samplesPerFrameFor(5000) == 5 &&
              hilrig::Bridge::samplesPerFrameFor(100) == 1,
          "samples per frame");
}

int main()
{
    test_session();
    test_release();
    test_no_release_output();
    test_rates();
    printf("bridge host test: %lu checks, %lu failures\n", g_checks, g_failures);
    return g_failures ? 1 : 0;
}
