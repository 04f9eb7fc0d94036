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
    ("telegram/0/1", 0xe428fc3757027f60),
    ("telegram/0/4", 0x42d4bf6315471c25),
    ("telegram/0/7", 0x8f984aedf121b08f),
    ("telegram/0/64", 0x807a72f25d8c66b0),
    ("telegram/150/1", 0xb6c575e67d318a03),
    ("telegram/150/4", 0x2aa080499332a270),
    ("telegram/150/7", 0x02beb7a18259524a),
    ("telegram/150/64", 0xea25d0523b288706),
    ("discord/0/1", 0xac66e4fe0bed837c),
    ("discord/0/4", 0x5c24b77c39ae29d5),
    ("discord/0/7", 0xf2906613135fdde2),
    ("discord/0/64", 0x6c532a2842261551),
    ("discord/150/1", 0xeac9dd0f564f8124),
    ("discord/150/4", 0xbbc611ebc08f8492),
    ("discord/150/7", 0x6b0193520d3a7517),
    ("discord/150/64", 0xfc3520caee17876e),
    ("generic/0/1", 0x2ab21e3be4ec953f),
    ("generic/0/4", 0x9714d110c8fe3aec),
    ("generic/0/7", 0xa47fa7ddf0909de9),
    ("generic/0/64", 0x4ecaabbe272527af),
    ("generic/150/1", 0xee8d2c26c8eb0b19),
    ("generic/150/4", 0x5143e37b0011f363),
    ("generic/150/7", 0x813e42fbf310b761),
    ("generic/150/64", 0x73bb5881968c158d),
    ("small/0/1", 0x8af90a3edc1f178a),
    ("small/0/4", 0xbb04c1248fc68add),
    ("small/0/7", 0xcf2ea906f619dacc),
    ("small/0/64", 0x9b546c88cece18cc),
    ("small/150/1", 0xa2b16b99c45fa44c),
    ("small/150/4", 0x21d9d2b7fac32b92),
    ("small/150/7", 0x0b5efa2bfe8b69dc),
    ("small/150/64", 0xb5bd4f3312ea2a15),
    ("small-reasoning-on/0/1", 0xeb1dddc8252a06ae),
    ("small-reasoning-on/0/4", 0xb008d891788982dd),
    ("small-reasoning-on/0/7", 0x7c6bf62156032ea0),
    ("small-reasoning-on/0/64", 0x5715e86dbc208e83),
    ("small-reasoning-on/150/1", 0xee798f7dbef8694b),
    ("small-reasoning-on/150/4", 0x6f3a1ed7dcbdd448),
    ("small-reasoning-on/150/7", 0xa2c8b250f64f5dfe),
    ("small-reasoning-on/150/64", 0x8b7a931bbeca7d0c),
    ("small-reasoning-stream/0/1", 0x1874c84efb8e3b7d),
    ("small-reasoning-stream/0/4", 0x96a2e519aa36bcf0),
    ("small-reasoning-stream/0/7", 0x68075f06c2529213),
    ("small-reasoning-stream/0/64", 0x3311a472e46d1ed4),
    ("small-reasoning-stream/150/1", 0x73e9a2003af9674f),
    ("small-reasoning-stream/150/4", 0x151c0f38d26757fc),
    ("small-reasoning-stream/150/7", 0x06b2fbaedeeb6fc2),
    ("small-reasoning-stream/150/64", 0xc6cd42e87f86bc37),
    ("small-human-natural/0/1", 0x64ac8821e2c129ca),
    ("small-human-natural/0/4", 0x257ca7919078bd7e),
    ("small-human-natural/0/7", 0xaada5aad7b5b989c),
    ("small-human-natural/0/64", 0x8a393b880c1a1af5),
    ("small-human-natural/150/1", 0x3a5def8a105a5af8),
    ("small-human-natural/150/4", 0xccaa8465f7dbafb9),
    ("small-human-natural/150/7", 0xdb67b6b94960dcb5),
    ("small-human-natural/150/64", 0xc83ed1e5405a7de6),
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
