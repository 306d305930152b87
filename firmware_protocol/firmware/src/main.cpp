// hilrig bridge firmware for a Teensy 4.1 / 4.0 (NXP i.MX RT1062, 600 MHz).
//
// Reads the arm and pendulum quadrature encoders with the chip's hardware quadrature
// decoders (ENC1, ENC2; QuadEncoder library), samples both counters at 10 kHz from an
// IntervalTimer interrupt into a ring buffer, and streams them to the host over USB
// serial (CDC ACM) in the hilrig bridge protocol (firmware_protocol/SPEC.md): SAMPLES
// frames of 10 samples, STATUS about once a second, INFO / ACK / NAK replies to the
// host's HELLO, START, STOP, ZERO, PING and RELEASE (protocol 1.1: a pulse on the release
// output, when one is configured below).
//
// The protocol and session logic lives in bridge.h (hardware-free, tested on the host by
// host_test/bridge_host_test.cpp); frames are built by ../c/hilrig_proto.h (tested
// against the shared vectors). This file is only the glue to the Teensy hardware.
//
// NOT BUILT OR RUN ON HARDWARE in this repository: it has been written against the
// Teensyduino core and the QuadEncoder library APIs but never compiled for the target.
// See ../README.md for building, flashing and wiring.

#include <Arduino.h>
#include <IntervalTimer.h>
#include <QuadEncoder.h>

#include "bridge.h"

// ---- configuration ----------------------------------------------------------------------

// Encoder inputs. Each phase goes through the XBAR1 crossbar to an ENC module input;
// the QuadEncoder library supports pins 0-5, 7, 8, 30, 31, 33 (and 36, 37 on a 4.1).
// Pins 0, 5 and 37 share one crossbar input: use only one of them.
//   arm      -> ENC1: phase A on pin 0, phase B on pin 1
//   pendulum -> ENC2: phase A on pin 2, phase B on pin 3
// (Pins 0/1 are also Serial1 RX/TX, which this firmware does not use.)
static const uint8_t kArmPinA = 0;
static const uint8_t kArmPinB = 1;
static const uint8_t kPendulumPinA = 2;
static const uint8_t kPendulumPinB = 3;
// 1 = enable the pads' internal pull-ups (open-collector encoder outputs); 0 = the
// encoder or the level shifter drives the lines push-pull.
static const uint8_t kPullups = 0;

// Input filter of the ENC modules (IPG clock 150 MHz): an edge is accepted after
// (kFilterCount + 3) agreeing samples taken every kFilterPeriod clocks, here 6 samples
// 33 ns apart = 0.2 us, well below the 1.25 us between edges of a 40,000 counts/rev
// encoder at 20 rev/s.
static const uint16_t kFilterCount = 3;
static const uint16_t kFilterPeriod = 5;

static const uint32_t kDefaultRateHz = 10000;
static const uint32_t kMaxRateHz = 20000;
static const uint32_t kCountsPerRev = 40000; // 10,000-line encoders, x4 decoding
static const char kFirmwareId[] = "hilrig-teensy4/1.1.0";
static const uint8_t kSampleIrqPriority = 16; // above USB (lower number = more urgent)

// Release output (RELEASE, protocol 1.1): the input of a latch or solenoid driver stage
// (a transistor or MOSFET with a flyback diode, see ../README.md), never a coil on the
// pin itself. Set at build time, e.g. PLATFORMIO_BUILD_FLAGS="-D HILRIG_RELEASE_PIN=6".
//   HILRIG_RELEASE_PIN          pin number; -1 = no release output: INFO advertises no
//                               CAP_RELEASE_OUTPUT and RELEASE is answered NAK 5
//   HILRIG_RELEASE_ACTIVE_HIGH  1: the pin is HIGH while the output is driven; 0: LOW
//   HILRIG_RELEASE_PULSE_MS     pulse of a RELEASE with pulse_ms 0
//   HILRIG_RELEASE_MAX_MS       longer requests are cut to this (protects the coil)
#ifndef HILRIG_RELEASE_PIN
#define HILRIG_RELEASE_PIN -1
#endif
#ifndef HILRIG_RELEASE_ACTIVE_HIGH
#define HILRIG_RELEASE_ACTIVE_HIGH 1
#endif
#ifndef HILRIG_RELEASE_PULSE_MS
#define HILRIG_RELEASE_PULSE_MS 50
#endif
#ifndef HILRIG_RELEASE_MAX_MS
#define HILRIG_RELEASE_MAX_MS 1000
#endif
#if HILRIG_RELEASE_PIN >= 0
static_assert(HILRIG_RELEASE_PIN != kArmPinA && HILRIG_RELEASE_PIN != kArmPinB &&
                  HILRIG_RELEASE_PIN != kPendulumPinA && HILRIG_RELEASE_PIN != kPendulumPinB &&
                  HILRIG_RELEASE_PIN != LED_BUILTIN,
              "HILRIG_RELEASE_PIN is an encoder input or the LED");
#endif

// ENC CTRL2 (i.MX RT1060 reference manual, ENC chapter): SABIRQ (bit 11) is set when
// PHASEA and PHASEB changed at the same time - an illegal quadrature transition. It is
// write-1-to-clear, like ROIRQ (bit 7) and RUIRQ (bit 5), which must be written as 0 so
// that clearing SABIRQ does not clear them too.
static const uint16_t kCtrl2SabIrq = 0x0800;
static const uint16_t kCtrl2W1cFlags = 0x0800 | 0x0080 | 0x0020;

// ---- hardware ---------------------------------------------------------------------------

QuadEncoder encArm(1, kArmPinA, kArmPinB, kPullups);                // ENC1
QuadEncoder encPendulum(2, kPendulumPinA, kPendulumPinB, kPullups); // ENC2
IntervalTimer sampleTimer;

// 8192 samples = 0.82 s at 10 kHz in the ring, in RAM2 (OCRAM, 128 KiB of 512 KiB).
DMAMEM static hilrig::SampleEntry sampleRing[8192];

static hilrig::Bridge *bridge = nullptr;

// Read and clear the illegal-transition flag of one ENC module.
static inline bool takeIllegalTransition(volatile IMXRT_ENC_t *enc)
{
    uint16_t ctrl2 = enc->CTRL2;
    if ((ctrl2 & kCtrl2SabIrq) == 0) {
        return false;
    }
    enc->CTRL2 = (uint16_t)((ctrl2 & ~kCtrl2W1cFlags) | kCtrl2SabIrq);
    return true;
}

// The sample timer interrupt: both counters within a few CPU cycles of each other, the
// cycle counter for late-sample detection, the illegal-transition flags.
static void sampleIsr()
{
    uint32_t cycles = ARM_DWT_CYCCNT;
    int32_t arm = encArm.read();     // UPOS then LPOSH: a consistent 32-bit snapshot
    int32_t pend = encPendulum.read();
    bool illegal0 = takeIllegalTransition(&IMXRT_ENC1);
    bool illegal1 = takeIllegalTransition(&IMXRT_ENC2);
    bridge->onSampleIsr(arm, pend, cycles, illegal0, illegal1);
}

class TeensyPort : public hilrig::Port {
public:
    // Teensy 4 USB serial: availableForWrite() counts only whole free transmit buffers,
    // so a write of at most that many bytes never blocks and never times out half-way
    // (a timed-out usb_serial_write would return having sent part of the frame).
    size_t availableForWrite() override
    {
        int n = Serial.availableForWrite();
        return n > 0 ? (size_t)n : 0;
    }
    size_t write(const uint8_t *data, size_t n) override { return Serial.write(data, n); }
    // micros() wraps every 71.6 minutes; poll() calls this on every loop pass.
    uint64_t micros64() override
    {
        uint32_t now = micros();
        if (now < last_) {
            high_ += (uint64_t)1 << 32;
        }
        last_ = now;
        return high_ | now;
    }
    bool startSampling(uint32_t period_us) override
    {
        sampleTimer.priority(kSampleIrqPriority);
        return sampleTimer.begin(sampleIsr, period_us);
    }
    void stopSampling() override { sampleTimer.end(); }
    // Called from the main loop and from sampleIsr(): one register write, no waiting.
    void setReleaseOutput(bool active) override
    {
#if HILRIG_RELEASE_PIN >= 0
        bool high = active == (HILRIG_RELEASE_ACTIVE_HIGH != 0);
        digitalWriteFast(HILRIG_RELEASE_PIN, high ? HIGH : LOW);
#else
        (void)active;
#endif
    }
    // Masks every interrupt, for the few instructions of Bridge::onRelease().
    void lockSampling() override { noInterrupts(); }
    void unlockSampling() override { interrupts(); }

private:
    uint32_t last_ = 0;
    uint64_t high_ = 0;
};

static TeensyPort port;

// boot_id (SPEC 4.1): 64 bits from the i.MX RT1062 TRNG (one 512-bit entropy block
// folded by XOR), mixed with the cycle counter. Should the TRNG not deliver within
// 200 ms, the cycle counter alone is used: weak (boot is nearly deterministic), so the
// host should then rely on sample indices restarting too.
static uint64_t readBootId()
{
    uint32_t hi = 0, lo = 0;
    CCM_CCGR6 |= CCM_CCGR6_TRNG(CCM_CCGR_ON);
    TRNG_MCTL = TRNG_MCTL_RST_DEF | TRNG_MCTL_PRGM; // program mode, default settings
    TRNG_MCTL = TRNG_MCTL_SAMP_MODE(2);             // run mode
    (void)TRNG_ENT15;                               // drop stale entropy, start a block
    elapsedMicros waited;
    while ((TRNG_MCTL & (TRNG_MCTL_ENT_VAL | TRNG_MCTL_ERR)) == 0 && waited < 200000) {
    }
    if (TRNG_MCTL & TRNG_MCTL_ENT_VAL) {
        for (int i = 0; i < 16; i += 2) {
            hi ^= *(&TRNG_ENT0 + i);
            lo ^= *(&TRNG_ENT0 + i + 1);
        }
        (void)TRNG_ENT0; // NXP SDK workaround: restart generation after reading ENT15
    }
    uint64_t id = ((uint64_t)hi << 32) | lo;
    id ^= (uint64_t)ARM_DWT_CYCCNT * 0x9E3779B97F4A7C15ULL;
    return id != 0 ? id : 1;
}

static void initEncoder(QuadEncoder &enc)
{
    enc.setInitConfig(); // x4 quadrature, no index/home, position starts at 0
    enc.EncConfig.filterCount = kFilterCount;
    enc.EncConfig.filterSamplePeriod = kFilterPeriod;
    enc.init();
}

void setup()
{
#if HILRIG_RELEASE_PIN >= 0
    // Inactive level first, then output: the pin floats from reset until here, so the
    // driver stage needs its own pull resistor to the inactive level (README).
    port.setReleaseOutput(false);
    pinMode(HILRIG_RELEASE_PIN, OUTPUT);
#endif
    pinMode(LED_BUILTIN, OUTPUT);
    Serial.begin(115200); // USB CDC: the baud rate is ignored (480 Mbit/s USB)

    initEncoder(encArm);
    initEncoder(encPendulum);
    takeIllegalTransition(&IMXRT_ENC1); // start with clean flags
    takeIllegalTransition(&IMXRT_ENC2);

    static hilrig::BridgeConfig cfg;
    cfg.default_rate_hz = kDefaultRateHz;
    cfg.max_rate_hz = kMaxRateHz;
    cfg.counts_per_rev_0 = kCountsPerRev;
    cfg.counts_per_rev_1 = kCountsPerRev;
    cfg.cycles_per_us = F_CPU_ACTUAL / 1000000u;
    cfg.boot_id = readBootId();
    cfg.firmware_id = kFirmwareId;
    cfg.release_output = HILRIG_RELEASE_PIN >= 0;
    cfg.release_pulse_ms = HILRIG_RELEASE_PULSE_MS;
    cfg.release_max_ms = HILRIG_RELEASE_MAX_MS;
    static hilrig::Bridge theBridge(port, cfg, sampleRing,
                                    sizeof sampleRing / sizeof sampleRing[0]);
    bridge = &theBridge;
    // SPEC 5.1: nothing is sent until the host's HELLO.
}

void loop()
{
    static bool hadDtr = false;
    uint8_t buf[256];
    int avail;
    while ((avail = Serial.available()) > 0) {
        size_t n = (size_t)avail < sizeof buf ? (size_t)avail : sizeof buf;
        n = Serial.readBytes((char *)buf, n);
        bridge->onReceive(buf, n);
    }
    // The host closed the port (DTR dropped): stop and wait for the next HELLO.
    bool dtr = Serial.dtr();
    if (hadDtr && !dtr) {
        bridge->closeSession();
    }
    hadDtr = dtr;

    bridge->poll();
    digitalWriteFast(LED_BUILTIN, bridge->streaming() ? HIGH : LOW);
}
