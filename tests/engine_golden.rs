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
    ("telegram/0/1", 0xd4e4e9626e3dffb1),
    ("telegram/0/4", 0xd5d5ede0978e8c3b),
    ("telegram/0/7", 0xeb6e0ece30cbfc1f),
    ("telegram/0/64", 0xb530aac3975bbd09),
    ("telegram/150/1", 0xe09dedc670d09102),
    ("telegram/150/4", 0x087041b32426b531),
    ("telegram/150/7", 0xd397a49b945bebc0),
    ("telegram/150/64", 0xfdf761b0f61cff2f),
    ("discord/0/1", 0x4611cadfd5b1bfb5),
    ("discord/0/4", 0xac16938ea6f3def4),
    ("discord/0/7", 0xa173a14b1f10cb0a),
    ("discord/0/64", 0xb6c745ad1bcb2e32),
    ("discord/150/1", 0x21986a66a05f2972),
    ("discord/150/4", 0x82ecb90aa0f1516b),
    ("discord/150/7", 0x3d96971a1ececd53),
    ("discord/150/64", 0x7ac4526709c3ec04),
    ("generic/0/1", 0x4ede10d4c8985dee),
    ("generic/0/4", 0x5e8a27b5dfa984ca),
    ("generic/0/7", 0x811287119b486ff9),
    ("generic/0/64", 0x95ffc08130ddb08e),
    ("generic/150/1", 0x93bdfa1429b259b4),
    ("generic/150/4", 0x391aef21c6482b90),
    ("generic/150/7", 0xd1d7b140d2c3c98f),
    ("generic/150/64", 0x9c236a61a1328afc),
    ("small/0/1", 0xd056b35f63ced6d5),
    ("small/0/4", 0xceea738b22e0e926),
    ("small/0/7", 0x535c57dc9f857896),
    ("small/0/64", 0x060208976814e9a6),
    ("small/150/1", 0x66518d42154dfc64),
    ("small/150/4", 0x8604dd24766af009),
    ("small/150/7", 0x75faebf0f0d145d8),
    ("small/150/64", 0x5eadb43c99df5597),
    ("small-reasoning-on/0/1", 0xaf738e84ffe30689),
    ("small-reasoning-on/0/4", 0x39539b19ac4a7bd6),
    ("small-reasoning-on/0/7", 0x11f567e8767328f4),
    ("small-reasoning-on/0/64", 0xeccfed18e8d98393),
    ("small-reasoning-on/150/1", 0x9fa9e34844f325c7),
    ("small-reasoning-on/150/4", 0x8f3031214a4c43e3),
    ("small-reasoning-on/150/7", 0x80c9aff324d78b58),
    ("small-reasoning-on/150/64", 0x1d3dd3991dd76166),
    ("small-reasoning-stream/0/1", 0xc624fd9bad7ee1d4),
    ("small-reasoning-stream/0/4", 0x7edce4b08bd53939),
    ("small-reasoning-stream/0/7", 0x049ddf9834dc066f),
    ("small-reasoning-stream/0/64", 0xfb39d869e8091dba),
    ("small-reasoning-stream/150/1", 0x04a8678556810ed7),
    ("small-reasoning-stream/150/4", 0x30fa49c92c9dda8f),
    ("small-reasoning-stream/150/7", 0x14728afb33465660),
    ("small-reasoning-stream/150/64", 0x3e8460d11c0c99ad),
    ("small-human-natural/0/1", 0x9def0e8722a32463),
    ("small-human-natural/0/4", 0x162fcd3e45a3381c),
    ("small-human-natural/0/7", 0x23f6b0596d03eecf),
    ("small-human-natural/0/64", 0xf22ccead5c848e44),
    ("small-human-natural/150/1", 0x0d7820c2cab5ad70),
    ("small-human-natural/150/4", 0x3e4aa3f980c59750),
    ("small-human-natural/150/7", 0xc9e40d4872f64e71),
    ("small-human-natural/150/64", 0x2a9b3186d1e22681),
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
