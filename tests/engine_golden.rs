//! Golden digests of the engine's full action log.
//!
//! Every `tests/data/*.md` file is streamed through the engine on the virtual clock
//! ([`Sim`]) in 1-, 4-, 7- and 64-byte deltas, under several configurations and ack
//! latencies, and the whole log (time and `{:?}` of every action, plus any push error) is
//! hashed with 64-bit FNV-1a. The digests below were generated from the engine before its
//! hot-path optimisations: any change to any action, its text, its order or its time fails
//! the test. An intended change of output regenerates them with
//!
//! ```sh
//! GOLDEN_PRINT=1 cargo test --test engine_golden -- --nocapture
//! ```
//!
//! and pastes the printed table over [`GOLDEN`].

use std::fmt::Write as _;

use replystream::sim::Sim;
use replystream::{ChannelProfile, Config, Engine, HumanDelay, Input, ReasoningMode};

/// 64-bit FNV-1a over everything written into it.
struct Fnv1a(u64);

impl Fnv1a {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;

    fn new() -> Self {
        Fnv1a(Self::OFFSET)
    }

    fn bytes(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(Self::PRIME);
        }
    }
}

impl std::fmt::Write for Fnv1a {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.bytes(s.as_bytes());
        Ok(())
    }
}

/// The configurations, by name.
fn config(name: &str) -> Config {
    let channel = |n| Config::for_channel(&ChannelProfile::by_name(n).expect("profile"));
    let small = || {
        let mut c = channel("generic");
        c.chunk_min = 40;
        c.chunk_max = 120;
        c.coalesce_min = Some(60);
        c
    };
    match name {
        "telegram" | "discord" | "generic" => channel(name),
        "small" => small(),
        "small-reasoning-on" => Config {
            reasoning: ReasoningMode::On,
            ..small()
        },
        "small-reasoning-stream" => Config {
            reasoning: ReasoningMode::Stream,
            ..small()
        },
        "small-human-natural" => Config {
            human_delay: HumanDelay::Natural,
            ..small()
        },
        _ => unreachable!("{name}"),
    }
}

const CONFIGS: [&str; 7] = [
    "telegram",
    "discord",
    "generic",
    "small",
    "small-reasoning-on",
    "small-reasoning-stream",
    "small-human-natural",
];
const ACK_MS: [u64; 2] = [0, 150];
const DELTA_BYTES: [usize; 4] = [1, 4, 7, 64];
/// Virtual time between two deltas: long enough for acks and some idle timers to land
/// between deltas, short enough that most blocks are coalesced.
const GAP_MS: u64 = 20;
const SEED: u64 = 7;

/// The sample files, sorted by name, with their contents.
fn samples() -> Vec<(String, String)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");
    let mut files: Vec<(String, String)> = std::fs::read_dir(dir)
        .expect("tests/data")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).expect("sample"))
        })
        .collect();
    files.sort();
    files
}

/// Streams `text` in `size`-byte deltas (rounded up to a char boundary), `GAP_MS` apart,
/// finishes the turn, and hashes the log into `hash`.
fn run_one(config_name: &str, ack_ms: u64, size: usize, text: &str, hash: &mut Fnv1a) {
    let engine = Engine::new(config(config_name), SEED).expect("config");
    let mut sim = Sim::with_latency(engine, ack_ms);
    let mut at = 0;
    while at < text.len() {
        let mut end = (at + size).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        sim.push(Input::TextDelta(&text[at..end]));
        at = end;
        sim.wait(GAP_MS);
    }
    sim.push(Input::Finish).run_until_idle();
    for (t, action) in &sim.log {
        writeln!(hash, "{t} {action:?}").unwrap();
    }
    for (t, error) in &sim.errors {
        writeln!(hash, "{t} error {error}").unwrap();
    }
}

/// `(case, digest)`: case is `config/ack ms/delta bytes`, over every sample file in order.
const GOLDEN: &[(&str, u64)] = &[
    ("telegram/0/1", 0x36ff63b705c598a5),
    ("telegram/0/4", 0xcda3093f7eebd705),
    ("telegram/0/7", 0xbe7e99e637e813c9),
    ("telegram/0/64", 0xbe8a4e102350b15a),
    ("telegram/150/1", 0xe214cfbeb0e0e8ba),
    ("telegram/150/4", 0x09405cbe2e02aa15),
    ("telegram/150/7", 0xb58926aeb11d8df1),
    ("telegram/150/64", 0x9e57e846fb048118),
    ("discord/0/1", 0xbbe9c0794ae5e1ce),
    ("discord/0/4", 0x9fcb50f974b2bc3e),
    ("discord/0/7", 0x8f0045fe60280f06),
    ("discord/0/64", 0xc4c52ca7ed07f679),
    ("discord/150/1", 0x169e9f9ba5bfd3a4),
    ("discord/150/4", 0x585da7bd20f5212a),
    ("discord/150/7", 0x7e0f7604dc8ded54),
    ("discord/150/64", 0xe4623ff4b935bbba),
    ("generic/0/1", 0x2ad63974fe0b7092),
    ("generic/0/4", 0x776136ee576ec10c),
    ("generic/0/7", 0x3b7a7182aee7b22b),
    ("generic/0/64", 0x8e96235a7cfa1fe9),
    ("generic/150/1", 0x79794484ce2f232c),
    ("generic/150/4", 0x1384c68c8bdf72fc),
    ("generic/150/7", 0x431a41bd2ebf216e),
    ("generic/150/64", 0x67eb77e6cfd8f047),
    ("small/0/1", 0x0ba3e435a7b60791),
    ("small/0/4", 0xf05e25ce7c41f2df),
    ("small/0/7", 0xf45f74655a885a86),
    ("small/0/64", 0xa84a9188724cd955),
    ("small/150/1", 0xad43da1bf35fbd3f),
    ("small/150/4", 0xf1934532f34b5e9f),
    ("small/150/7", 0x933a002d0a695852),
    ("small/150/64", 0x22e948420702cfae),
    ("small-reasoning-on/0/1", 0x4a2301a4bcf5388d),
    ("small-reasoning-on/0/4", 0x82a78354bbaa3809),
    ("small-reasoning-on/0/7", 0x1b3383b2aa6aba14),
    ("small-reasoning-on/0/64", 0xa5cfd059c49b231c),
    ("small-reasoning-on/150/1", 0xa814ddc50a2e6e9c),
    ("small-reasoning-on/150/4", 0xdee508a40bbe6195),
    ("small-reasoning-on/150/7", 0xc1cd6442590def12),
    ("small-reasoning-on/150/64", 0xb7ad33f1f0406ff1),
    ("small-reasoning-stream/0/1", 0xba66097c2fb85984),
    ("small-reasoning-stream/0/4", 0x7ddc42ace428e092),
    ("small-reasoning-stream/0/7", 0x35db103220072449),
    ("small-reasoning-stream/0/64", 0xdd5e337825eadd9d),
    ("small-reasoning-stream/150/1", 0x61e826e798e86c18),
    ("small-reasoning-stream/150/4", 0x51531292a4bc2659),
    ("small-reasoning-stream/150/7", 0xee7362281cd97eb2),
    ("small-reasoning-stream/150/64", 0x707569380e6edc8c),
    ("small-human-natural/0/1", 0x5d21eae465cecf9c),
    ("small-human-natural/0/4", 0x60ad4b4fb1757c8f),
    ("small-human-natural/0/7", 0x309519b516a40141),
    ("small-human-natural/0/64", 0x2f375ef821fd6e34),
    ("small-human-natural/150/1", 0x25d4aba05f0784ca),
    ("small-human-natural/150/4", 0x61d947b24baa4505),
    ("small-human-natural/150/7", 0x729881081bc2c72a),
    ("small-human-natural/150/64", 0x0dfba914644fab8a),
];

#[test]
fn action_logs_match_golden_digests() {
    let files = samples();
    assert!(files.len() >= 10, "sample files missing");
    let print = std::env::var_os("GOLDEN_PRINT").is_some();
    // One thread per configuration; the cases keep their fixed order.
    let got: Vec<(String, u64)> = std::thread::scope(|s| {
        let handles: Vec<_> = CONFIGS
            .map(|name| {
                let files = &files;
                s.spawn(move || {
                    let mut got = Vec::new();
                    for ack in ACK_MS {
                        for size in DELTA_BYTES {
                            let mut hash = Fnv1a::new();
                            for (file, text) in files {
                                hash.bytes(file.as_bytes());
                                run_one(name, ack, size, text, &mut hash);
                            }
                            got.push((format!("{name}/{ack}/{size}"), hash.0));
                        }
                    }
                    got
                })
            })
            .into_iter()
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("golden run"))
            .collect()
    });
    if print {
        println!("const GOLDEN: &[(&str, u64)] = &[");
        for (case, digest) in &got {
            println!("    ({case:?}, {digest:#018x}),");
        }
        println!("];");
        return;
    }
    assert_eq!(got.len(), GOLDEN.len(), "case list changed: regenerate");
    let mismatched: Vec<&str> = got
        .iter()
        .zip(GOLDEN)
        .filter(|((case, digest), (want_case, want))| case != want_case || digest != want)
        .map(|((case, _), _)| case.as_str())
        .collect();
    assert!(mismatched.is_empty(), "action logs changed: {mismatched:?}");
}
