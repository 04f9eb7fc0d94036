//! The two example bots (`connections/examples/`) run as a user runs them, against the fake
//! Telegram and Discord servers and a fake model API on loopback (the examples read the
//! servers' URLs from the environment). The example binaries are the ones cargo built for
//! this test run: `cargo test` builds every example; a run narrowed with `--test` does not,
//! hence the message below.
#![allow(clippy::disallowed_methods)] // real processes, real time

mod fake;

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fake::discord::FakeDiscord;
use fake::telegram::FakeTelegram;

const KEY: &str = "sk-EXAMPLE-KEY";

/// An Anthropic Messages stream of one text block.
const ANTHROPIC: &str = "event: message_start\n\
data: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"content\":[]}}\n\n\
event: content_block_start\n\
data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n\
event: content_block_delta\n\
data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello from the model, \"}}\n\n\
event: content_block_delta\n\
data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"@everyone: caf\u{e9} \u{1F30A}.\"}}\n\n\
event: content_block_stop\n\
data: {\"type\":\"content_block_stop\",\"index\":0}\n\n\
event: message_stop\n\
data: {\"type\":\"message_stop\"}\n\n";

/// An OpenAI chat-completions stream.
const OPENAI: &str = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi there, \"}}]}\n\n\
data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"from a model \u{2014} \u{4F60}\u{597D}.\"}}]}\n\n\
data: [DONE]\n\n";

/// The built example `name` (next to this test's own binary, in `examples/`).
fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test's path");
    let path = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target/<profile>/deps")
        .join("examples")
        .join(name);
    assert!(
        path.exists(),
        "{} is not built: run `cargo test -p replystream-connections` (which builds the \
         examples), or `cargo build -p replystream-connections --examples` first",
        path.display()
    );
    path
}

#[test]
fn the_discord_example_posts_the_models_answer_and_exits_0() {
    let model = fake::sse_server(ANTHROPIC, 17, None, KEY);
    let discord = FakeDiscord::start("DISCORD-TOKEN", &["900"]);
    let output = Command::new(example("discord_bot"))
        .args(["900", "Say hello"])
        .env("DISCORD_BOT_TOKEN", "DISCORD-TOKEN")
        .env("ANTHROPIC_API_KEY", KEY)
        .env("ANTHROPIC_BASE_URL", format!("{}/v1", model.url()))
        .env("DISCORD_API_URL", discord.url())
        .output()
        .expect("run the example");
    let out = String::from_utf8_lossy(&output.stdout);
    let err = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{out}\n{err}");
    assert!(out.ends_with("delivered\n"), "{out}");
    let messages = discord.messages("900");
    let contents: Vec<&str> = messages.iter().map(|m| m.content.as_str()).collect();
    // The discord format defuses the model's `@everyone` in the text (a zero-width space).
    assert_eq!(
        contents,
        ["Hello from the model, @\u{200b}everyone: caf\u{e9} \u{1F30A}."]
    );
    assert!(messages[0].pings.is_empty(), "{messages:?}");
}

#[test]
fn the_telegram_example_answers_a_message_with_the_models_reply() {
    let model = fake::sse_server(OPENAI, 11, None, KEY);
    let telegram = FakeTelegram::start("1:TELEGRAM-TOKEN", &["55"]);
    telegram.user_says("55", "hello?");
    // The bot long-polls for ever: it is stopped once the chat holds the reply, or after 20 s.
    let mut bot = Command::new(example("telegram_bot"))
        .env("TELEGRAM_BOT_TOKEN", "1:TELEGRAM-TOKEN")
        .env("OPENAI_API_KEY", KEY)
        .env("OPENAI_BASE_URL", format!("{}/v1", model.url()))
        .env("TELEGRAM_API_URL", telegram.url())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("run the example");
    let want = ["Hi there, from a model \u{2014} \u{4F60}\u{597D}."];
    let started = Instant::now();
    while telegram.texts("55") != want && started.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(50));
    }
    // A moment more: nothing after the final (no second message, no duplicate).
    std::thread::sleep(Duration::from_millis(300));
    bot.kill().expect("stop the bot");
    bot.wait().expect("reap the bot");
    assert_eq!(telegram.texts("55"), want);
}
