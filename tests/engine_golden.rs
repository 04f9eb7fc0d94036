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
    ("telegram/0/1", 0x6f3f0558cca5603b),
    ("telegram/0/4", 0x415b085980ecd670),
    ("telegram/0/7", 0x216c4cb906e157fe),
    ("telegram/0/64", 0x42af5d46927f14e9),
    ("telegram/150/1", 0x1b063e249899dcdc),
    ("telegram/150/4", 0x617c6176b83f9bde),
    ("telegram/150/7", 0xa8375c74b32c2f69),
    ("telegram/150/64", 0x59961453152cee0f),
    ("discord/0/1", 0x7920b40412a21b9b),
    ("discord/0/4", 0xa236d90e09c99a4e),
    ("discord/0/7", 0xd97e2b02c37b2d48),
    ("discord/0/64", 0xc0098c83a01be9bc),
    ("discord/150/1", 0x2d61acc51214c2fe),
    ("discord/150/4", 0x0cc0ee61b02c6fdb),
    ("discord/150/7", 0x6c3dfc9fc8475547),
    ("discord/150/64", 0x07907adc403d5f5c),
    ("generic/0/1", 0x0d5d0bdb8368cdac),
    ("generic/0/4", 0x461568b17a87845b),
    ("generic/0/7", 0xf3d794e417fdf4c6),
    ("generic/0/64", 0x0f46c3d0af9b3b2e),
    ("generic/150/1", 0xd45a31e8d0beaa22),
    ("generic/150/4", 0xbadfd43b21fa05f5),
    ("generic/150/7", 0xdf3e49ba3c46de26),
    ("generic/150/64", 0xf7b4d72df7a06e9c),
    ("small/0/1", 0x2980d12a5b71cccb),
    ("small/0/4", 0x63f4314d98f5fde2),
    ("small/0/7", 0x0122d585a2adf0a6),
    ("small/0/64", 0x2b72e180b77820ae),
    ("small/150/1", 0x4123f0ac74ffd99a),
    ("small/150/4", 0xaecde06003359dcf),
    ("small/150/7", 0x03d0c735973397b6),
    ("small/150/64", 0x748a8c9f569f122d),
    ("small-reasoning-on/0/1", 0xae4fb22a05dc1a61),
    ("small-reasoning-on/0/4", 0x442194346613f6a4),
    ("small-reasoning-on/0/7", 0x98cb85d951009df6),
    ("small-reasoning-on/0/64", 0x264c0994608078cf),
    ("small-reasoning-on/150/1", 0x48b4f86332a8bfc9),
    ("small-reasoning-on/150/4", 0x9667e0e50b93c263),
    ("small-reasoning-on/150/7", 0x1f7db2704a9166dc),
    ("small-reasoning-on/150/64", 0xdec587d07dd52cf0),
    ("small-reasoning-stream/0/1", 0x70e6c80786296040),
    ("small-reasoning-stream/0/4", 0xde3cdf50f7d91f4f),
    ("small-reasoning-stream/0/7", 0xde9fc8c671b516a1),
    ("small-reasoning-stream/0/64", 0x86e5257e8a6ed66a),
    ("small-reasoning-stream/150/1", 0xb867c73b23289753),
    ("small-reasoning-stream/150/4", 0x21c06ebad9690a11),
    ("small-reasoning-stream/150/7", 0xcd5f7141dcb5ad2e),
    ("small-reasoning-stream/150/64", 0xeb9413f37c73ae1f),
    ("small-human-natural/0/1", 0xf0c669d6cf3c1580),
    ("small-human-natural/0/4", 0x1e9e659347d6b91e),
    ("small-human-natural/0/7", 0x900bf798709b138d),
    ("small-human-natural/0/64", 0x61f61f0a6d16d3a6),
    ("small-human-natural/150/1", 0xaa8131065ff52a2f),
    ("small-human-natural/150/4", 0x66528cc5d1d76564),
    ("small-human-natural/150/7", 0x2a8d80284fa3b0a9),
    ("small-human-natural/150/64", 0xb74b331d5c6dfc0f),
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
