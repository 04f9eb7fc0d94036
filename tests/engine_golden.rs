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
    ("telegram/0/1", 0x8c2ae03994edcee8),
    ("telegram/0/4", 0xffd026bd0a271ab0),
    ("telegram/0/7", 0xbe3fadd96476acc5),
    ("telegram/0/64", 0x731fc26657cceee0),
    ("telegram/150/1", 0xedd9669c4bd1e20b),
    ("telegram/150/4", 0x1605db77ef76fdb2),
    ("telegram/150/7", 0xad260eeacd5d90a5),
    ("telegram/150/64", 0x99df7934f328dee6),
    ("discord/0/1", 0xd6e18a4466c9801d),
    ("discord/0/4", 0x9fa7bf51aa86c4a1),
    ("discord/0/7", 0x938f44c44b2655ac),
    ("discord/0/64", 0x038f4ec78db9e457),
    ("discord/150/1", 0x2d7a85619813ee8d),
    ("discord/150/4", 0x79b4c910763ca792),
    ("discord/150/7", 0x408d8616b620a044),
    ("discord/150/64", 0xaa917f69be3d866a),
    ("generic/0/1", 0xa13f91e66d4e717d),
    ("generic/0/4", 0xdb9a817960a9e88f),
    ("generic/0/7", 0x7d944e9d97c7e9c5),
    ("generic/0/64", 0x34fe0128a73e7750),
    ("generic/150/1", 0xeb5f7c0bf5989def),
    ("generic/150/4", 0x8ecc146f24294d5d),
    ("generic/150/7", 0x1065876147cf19d7),
    ("generic/150/64", 0x9a40099efa693166),
    ("small/0/1", 0xfcacd13ae65840f4),
    ("small/0/4", 0xf957b173adbf1b2f),
    ("small/0/7", 0xb656be6badd2174a),
    ("small/0/64", 0x7afbcce3c7859fdf),
    ("small/150/1", 0x09d326b17f928248),
    ("small/150/4", 0x9f4e798ef360ba73),
    ("small/150/7", 0xc13646f71056e0f3),
    ("small/150/64", 0x0e47c27e5a0d6739),
    ("small-reasoning-on/0/1", 0x1b2480741d404d8b),
    ("small-reasoning-on/0/4", 0xa4ded4f024921104),
    ("small-reasoning-on/0/7", 0x9cbb329bcb51d647),
    ("small-reasoning-on/0/64", 0x9c0e45f5bd73aabd),
    ("small-reasoning-on/150/1", 0x63d56c27945359d5),
    ("small-reasoning-on/150/4", 0x81256882f2ac7c15),
    ("small-reasoning-on/150/7", 0x017ef989d38f60f1),
    ("small-reasoning-on/150/64", 0x7721202356553360),
    ("small-reasoning-stream/0/1", 0xcb180da461eb9ce4),
    ("small-reasoning-stream/0/4", 0xe944de628af8e0d1),
    ("small-reasoning-stream/0/7", 0xc07458aab6190d9d),
    ("small-reasoning-stream/0/64", 0xa1bf2357087636e7),
    ("small-reasoning-stream/150/1", 0x7b643877179b9812),
    ("small-reasoning-stream/150/4", 0xccd4f734fee354be),
    ("small-reasoning-stream/150/7", 0x79e5568afcb8c2e3),
    ("small-reasoning-stream/150/64", 0x437a9fb17b890b7a),
    ("small-human-natural/0/1", 0xe503beb7cc875d93),
    ("small-human-natural/0/4", 0xe0f65b30466aee6f),
    ("small-human-natural/0/7", 0xc20e98a637003a5a),
    ("small-human-natural/0/64", 0x58853a9f9394051c),
    ("small-human-natural/150/1", 0x9747d8016d9cab57),
    ("small-human-natural/150/4", 0xbda0c2140e51a002),
    ("small-human-natural/150/7", 0xb52b79a72de6b978),
    ("small-human-natural/150/64", 0xa9b8346e50276b80),
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
