//! `replystream post` end to end: the binary streams into fake chat platforms and a fake
//! model API on loopback; what the fake chats hold, the timeline, the summary and the exit
//! status are checked. No token ever shows in the output.
#![allow(clippy::disallowed_methods)] // real servers, real time

#[path = "../../connections/tests/fake/mod.rs"]
mod fake;

use std::io::Write;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use fake::discord::FakeDiscord;
use fake::slack::FakeSlack;
use fake::telegram::{FakeTelegram, Fault};

const BIN: &str = env!("CARGO_BIN_EXE_replystream");
const TG_TOKEN: &str = "4242:TG-SECRET-abc";
const DC_TOKEN: &str = "DC-SECRET.xyz";
const SL_TOKEN: &str = "xoxb-SL-SECRET";
const MODEL_KEY: &str = "sk-MODEL-SECRET";

fn post(args: &[&str], env: &[(&str, &str)], stdin: Option<&str>) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.arg("post").args(args);
    for var in [
        "TELEGRAM_BOT_TOKEN",
        "DISCORD_BOT_TOKEN",
        "SLACK_BOT_TOKEN",
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
    ] {
        cmd.env_remove(var);
    }
    cmd.envs(env.iter().copied());
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("run replystream");
    let mut input = child.stdin.take().unwrap();
    // A command refused before it reads its input (a usage error) may exit before the
    // write: its closed pipe is no failure of the test.
    match input.write_all(stdin.unwrap_or("").as_bytes()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        other => other.unwrap(),
    }
    drop(input);
    child.wait_with_output().unwrap()
}

fn texts(output: &Output) -> (String, String) {
    let out = String::from_utf8(output.stdout.clone()).unwrap();
    let err = String::from_utf8(output.stderr.clone()).unwrap();
    for secret in [TG_TOKEN, DC_TOKEN, SL_TOKEN, MODEL_KEY, "SECRET"] {
        assert!(
            !out.contains(secret) && !err.contains(secret),
            "a token was printed:\n{out}\n{err}"
        );
    }
    (out, err)
}

fn data_path(name: &str) -> String {
    format!("{}/../tests/data/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn a_file_is_posted_to_telegram_with_a_timeline_and_exit_0_despite_a_429() {
    let fake = FakeTelegram::start(TG_TOKEN, &["-1001"]);
    fake.fail_later("sendMessage", 1, Fault::RateLimit(1));
    let url = fake.url();
    let args = [
        &data_path("prose-paragraphs.md") as &str,
        "--to",
        "telegram",
        "--chat",
        "-1001",
        "--api-url",
        &url,
        "--rate",
        "5000",
        "--token",
        "8",
        "--chunk-min",
        "200",
        "--chunk-max",
        "500",
        "--coalesce-min",
        "200",
        "--coalesce-max",
        "500",
    ];
    let output = post(&args, &[("TELEGRAM_BOT_TOKEN", TG_TOKEN)], None);
    let (out, err) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{out}\n{err}");
    let chat = fake.texts("-1001");
    assert!(chat.len() >= 3, "{chat:?}");
    let input = std::fs::read_to_string(data_path("prose-paragraphs.md")).unwrap();
    fake::tiles(&input, &chat).unwrap();
    assert!(
        out.contains("retry after 1000 ms: sendMessage: 429"),
        "{out}"
    );
    // Each delivered message's line names its Telegram message id.
    for id in 100..100 + chat.len() {
        assert!(
            out.contains(&format!(" {id} ")),
            "message {id} missing from:\n{out}"
        );
    }
    assert!(out.contains("everything was delivered"), "{out}");
    assert_eq!(fake.state.lock().unwrap().early_calls, 0);
}

#[test]
fn a_blocked_bot_exits_1_and_says_what_was_not_delivered() {
    let fake = FakeTelegram::start(TG_TOKEN, &["5"]);
    fake.block("5");
    let url = fake.url();
    let args = [
        "-",
        "--to",
        "telegram",
        "--chat",
        "5",
        "--api-url",
        &url,
        "--rate",
        "10000",
    ];
    let output = post(
        &args,
        &[("TELEGRAM_BOT_TOKEN", TG_TOKEN)],
        Some("Hello there, a short reply."),
    );
    let (out, err) = texts(&output);
    assert_eq!(output.status.code(), Some(1), "{out}\n{err}");
    assert!(
        out.contains("failed: sendMessage: 403 Forbidden: bot was blocked by the user"),
        "{out}"
    );
    assert!(out.contains("not delivered: final"), "{out}");
    assert!(err.contains("1 message(s) not delivered"), "{err}");
}

#[test]
fn usage_errors_exit_2() {
    let output = post(&["-", "--to", "telegram", "--chat", "5"], &[], Some("hi"));
    let (_, err) = texts(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(err.contains("TELEGRAM_BOT_TOKEN is not set"), "{err}");
    let output = post(&["-", "--to", "irc", "--chat", "5"], &[], Some("hi"));
    assert_eq!(output.status.code(), Some(2));
    let output = post(
        &["--to", "slack", "--chat", "C1", "--from", "openai"],
        &[("SLACK_BOT_TOKEN", SL_TOKEN)],
        None,
    );
    assert_eq!(
        output.status.code(),
        Some(2),
        "--from needs --model and --prompt"
    );
    let output = post(
        &[
            "f.md",
            "--to",
            "slack",
            "--chat",
            "C1",
            "--from",
            "anthropic",
            "--model",
            "m",
            "--prompt",
            "p",
        ],
        &[],
        None,
    );
    assert_eq!(output.status.code(), Some(2), "FILE and --from conflict");
}

#[test]
fn an_unreachable_platform_exits_1_in_bounded_time() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let began = Instant::now();
    let args = [
        "-",
        "--to",
        "discord",
        "--chat",
        "1",
        "--api-url",
        &url,
        "--rate",
        "10000",
    ];
    let output = post(
        &args,
        &[("DISCORD_BOT_TOKEN", DC_TOKEN)],
        Some("Nobody will read this."),
    );
    let (out, err) = texts(&output);
    assert_eq!(output.status.code(), Some(1), "{out}\n{err}");
    assert!(out.contains("retry: network:"), "{out}");
    assert!(began.elapsed() < Duration::from_secs(30));
}

const ANTHROPIC_REPLY: &str = "event: message_start\n\
data: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"content\":[]}}\n\n\
event: content_block_start\n\
data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\"}}\n\n\
event: content_block_delta\n\
data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"private thoughts\"}}\n\n\
event: content_block_stop\n\
data: {\"type\":\"content_block_stop\",\"index\":0}\n\n\
event: content_block_start\n\
data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n\
event: content_block_delta\n\
data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"Bonjour ✓ \"}}\n\n\
event: content_block_delta\n\
data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"from the model.\"}}\n\n\
event: content_block_stop\n\
data: {\"type\":\"content_block_stop\",\"index\":1}\n\n\
event: message_stop\n\
data: {\"type\":\"message_stop\"}\n\n";

#[test]
fn a_live_anthropic_reply_is_posted_to_slack() {
    let model = fake::sse_server(ANTHROPIC_REPLY, 23, None, MODEL_KEY);
    let fake = FakeSlack::start(SL_TOKEN, &["C42"]);
    let (url, base) = (fake.url(), format!("{}/v1", model.url()));
    let args = [
        "--to",
        "slack",
        "--chat",
        "C42",
        "--api-url",
        &url,
        "--from",
        "anthropic",
        "--base-url",
        &base,
        "--model",
        "claude-x",
        "--prompt",
        "Say hi",
    ];
    let env = [
        ("SLACK_BOT_TOKEN", SL_TOKEN),
        ("ANTHROPIC_API_KEY", MODEL_KEY),
    ];
    let output = post(&args, &env, None);
    let (out, err) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{out}\n{err}");
    assert_eq!(fake.texts("C42"), ["Bonjour ✓ from the model."]);
    assert!(
        out.contains("1700000000.000100"),
        "the Slack ts is shown:\n{out}"
    );
}

const OPENAI_BROKEN: &str = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"The first half \"}}]}\n\n\
data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"of a reply\"}}]}\n\n\
data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" that never";

#[test]
fn a_model_stream_that_breaks_exits_1_after_posting_what_came_and_the_error() {
    let model = fake::sse_server(OPENAI_BROKEN, 40, Some(OPENAI_BROKEN.len()), MODEL_KEY);
    let fake = FakeDiscord::start(DC_TOKEN, &["900"]);
    let (url, base) = (fake.url(), model.url());
    let args = [
        "--to",
        "discord",
        "--chat",
        "900",
        "--api-url",
        &url,
        "--from",
        "openai",
        "--base-url",
        &base,
        "--model",
        "gpt-x",
        "--prompt",
        "Go",
    ];
    let env = [
        ("DISCORD_BOT_TOKEN", DC_TOKEN),
        ("OPENAI_API_KEY", MODEL_KEY),
    ];
    let output = post(&args, &env, None);
    let (out, err) = texts(&output);
    assert_eq!(output.status.code(), Some(1), "{out}\n{err}");
    assert!(err.contains("model stream:"), "{err}");
    let chat = fake.contents("900").join("\n");
    assert!(chat.starts_with("The first half of a reply"), "{chat}");
    assert!(chat.contains("The reply broke off"), "{chat}");
    assert!(
        !chat.contains("that never"),
        "an incomplete event is not shown: {chat}"
    );
}

#[test]
fn a_live_preview_through_post_ends_as_one_message_holding_the_reply() {
    let fake = FakeTelegram::start(TG_TOKEN, &["77"]);
    let url = fake.url();
    let reply = "Streaming into one message: it is created, edited as the text grows, \
                 and finally edited into the whole reply, cursor gone. 漢字 and 👩‍👩‍👧 too.";
    let args = [
        "-",
        "--to",
        "telegram",
        "--chat",
        "77",
        "--api-url",
        &url,
        "--rate",
        "40",
        "--token",
        "3",
        "--preview",
        "partial",
        "--throttle-ms",
        "250",
    ];
    let output = post(&args, &[("TELEGRAM_BOT_TOKEN", TG_TOKEN)], Some(reply));
    let (out, err) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{out}\n{err}");
    let messages = fake.messages("77");
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert_eq!(messages[0].text, reply);
    assert!(messages[0].edits >= 2, "{messages:?}");
    assert!(out.contains("create preview"), "{out}");
    assert!(out.contains("edit   preview"), "{out}");
    assert!(out.contains("edit   final"), "{out}");
}

#[test]
fn a_slack_draft_preview_streams_natively_and_the_reply_shows_once() {
    let fake = FakeSlack::start(SL_TOKEN, &["C7"]);
    let url = fake.url();
    let reply = "Streamed with chat.startStream, grown with chat.appendStream and closed by \
                 chat.stopStream, in the thread of the question. 漢字 and 👩‍👩‍👧 too, <b> & all.";
    // The reply answers the user's message: the tag resolves to it, the stream is in its thread.
    let input = format!("[[reply_to_current]]{reply}");
    let args = [
        "-",
        "--to",
        "slack",
        "--chat",
        "C7",
        "--api-url",
        &url,
        "--rate",
        "40",
        "--token",
        "3",
        "--preview",
        "partial",
        "--preview-transport",
        "draft",
        "--throttle-ms",
        "250",
        "--current-message",
        "1700000000.000042",
    ];
    let output = post(&args, &[("SLACK_BOT_TOKEN", SL_TOKEN)], Some(&input));
    let (out, err) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{out}\n{err}");
    let messages = fake.messages("C7");
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert_eq!(messages[0].text, reply);
    assert_eq!(messages[0].thread_ts.as_deref(), Some("1700000000.000042"));
    assert!(
        messages[0].streamed && messages[0].appends >= 1,
        "{messages:?}"
    );
    let methods: Vec<String> = fake.calls().into_iter().map(|c| c.0).collect();
    assert_eq!(methods[0], "chat.startStream", "{methods:?}");
    assert_eq!(methods.last().unwrap(), "chat.stopStream", "{methods:?}");
    assert!(out.contains("draft  preview"), "{out}");
    assert!(out.contains("create final"), "{out}");
}

/// `--channel` defaults to the `--to` platform's profile, with or without `--config`, and a
/// `--channel` given on the command line is used as given, `generic` included.
#[test]
fn the_channel_is_the_platform_unless_given() {
    let fake = FakeTelegram::start(TG_TOKEN, &["8"]);
    let url = fake.url();
    let config = data_path("openclaw/gateway.json5");
    let run = |extra: &[&str]| {
        let mut args = vec!["-", "--to", "telegram", "--chat", "8", "--api-url", &url];
        args.extend_from_slice(extra);
        let output = post(&args, &[("TELEGRAM_BOT_TOKEN", TG_TOKEN)], Some("Hi."));
        let (out, err) = texts(&output);
        assert_eq!(output.status.code(), Some(0), "{extra:?}\n{out}\n{err}");
        out.lines().next().unwrap_or_default().to_owned()
    };
    let header = |channel: &str| format!("replystream post: - to telegram chat 8 ({channel})");
    assert_eq!(run(&[]), header("telegram"));
    assert_eq!(run(&["--config", &config]), header("telegram"));
    assert_eq!(run(&["--channel", "generic"]), header("generic"));
    assert_eq!(run(&["--channel", "discord"]), header("discord"));

    let help = Command::new(BIN).args(["post", "--help"]).output().unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    let channel = help
        .split("--channel <NAME>")
        .nth(1)
        .and_then(|rest| rest.split("\n      --").next())
        .unwrap_or_else(|| panic!("no --channel in:\n{help}"));
    // The help is wrapped to the terminal's width: compare its words.
    let channel = channel.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        channel.contains("[default: the --to platform's]") && !channel.contains("generic]"),
        "{channel}"
    );
}

/// Neither the model nor the platform answers: the exit status is 1 and the error names the
/// model's failure, whether or not the platform's retries ran out within `--wait`.
#[test]
fn an_unreachable_model_is_named_in_the_error() {
    let free_port = || {
        std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    };
    let platform = format!("http://127.0.0.1:{}", free_port());
    let model = format!("http://127.0.0.1:{}/v1", free_port());
    for wait in ["1", "30"] {
        let args = [
            "--to",
            "telegram",
            "--chat",
            "1",
            "--api-url",
            &platform,
            "--from",
            "openai",
            "--base-url",
            &model,
            "--model",
            "m",
            "--prompt",
            "hi",
            "--wait",
            wait,
        ];
        let env = [
            ("TELEGRAM_BOT_TOKEN", TG_TOKEN),
            ("OPENAI_API_KEY", MODEL_KEY),
        ];
        let output = post(&args, &env, None);
        let (out, err) = texts(&output);
        assert_eq!(output.status.code(), Some(1), "--wait {wait}\n{out}\n{err}");
        assert!(
            err.contains("model stream: model request:") && err.contains("refused"),
            "--wait {wait}\n{out}\n{err}"
        );
    }
}

/// Markdown a chat must never show raw.
const STYLED: &str = "**Done** & <b>sent</b>: see [the docs](https://example.com/?a=1&b=2), \
`a<b` and *new* 漢字 👩‍👩‍👧\n\n```rust\nfn main() {}\n```\n";

#[test]
fn post_renders_for_telegram_as_html_or_entities_and_the_chat_shows_the_styles() {
    for format in [None, Some("telegram-entities")] {
        let fake = FakeTelegram::start(TG_TOKEN, &["31"]);
        let url = fake.url();
        let mut args = vec!["-", "--to", "telegram", "--chat", "31", "--api-url", &url];
        if let Some(f) = format {
            args.extend(["--format", f]);
        }
        let output = post(&args, &[("TELEGRAM_BOT_TOKEN", TG_TOKEN)], Some(STYLED));
        let (out, err) = texts(&output);
        assert_eq!(output.status.code(), Some(0), "{format:?}: {out}\n{err}");
        let messages = fake.messages("31");
        assert_eq!(messages.len(), 1, "{format:?}: {messages:?}");
        let m = &messages[0];
        let expected_mode = if format.is_some() { None } else { Some("HTML") };
        assert_eq!(m.parse_mode.as_deref(), expected_mode);
        assert_eq!(
            m.text, "Done & <b>sent</b>: see the docs, a<b and new 漢字 👩‍👩‍👧\n\nfn main() {}",
            "{format:?}"
        );
        assert_eq!(m.styled("bold"), ["Done"]);
        assert_eq!(m.styled("text_link"), ["the docs"]);
        assert_eq!(m.styled("code"), ["a<b"]);
        assert_eq!(m.styled("italic"), ["new"]);
        assert_eq!(m.styled("pre"), ["fn main() {}"]);
    }
}

#[test]
fn post_renders_for_slack_as_mrkdwn() {
    let fake = FakeSlack::start(SL_TOKEN, &["C5"]);
    let url = fake.url();
    let args = ["-", "--to", "slack", "--chat", "C5", "--api-url", &url];
    let output = post(&args, &[("SLACK_BOT_TOKEN", SL_TOKEN)], Some(STYLED));
    let (out, err) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{out}\n{err}");
    let messages = fake.messages("C5");
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert_eq!(messages[0].markup, "mrkdwn");
    assert_eq!(
        messages[0].raw,
        "*Done* &amp; &lt;b&gt;sent&lt;/b&gt;: see <https://example.com/?a=1&amp;b=2|the docs>, \
         `a&lt;b` and _new_ 漢字 👩‍👩‍👧\n\n```fn main() {}```"
    );
}

#[test]
fn post_renders_for_discord_with_tables_as_code_and_mass_mentions_defused() {
    let fake = FakeDiscord::start(DC_TOKEN, &["901"]);
    let url = fake.url();
    let reply = "**Hi** @here:\n\n| k | v |\n|---|---|\n| a | 1 |\n";
    let args = ["-", "--to", "discord", "--chat", "901", "--api-url", &url];
    let output = post(&args, &[("DISCORD_BOT_TOKEN", DC_TOKEN)], Some(reply));
    let (out, err) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{out}\n{err}");
    let messages = fake.messages("901");
    let contents: Vec<&str> = messages.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(
        contents,
        ["**Hi** @\u{200b}here:\n\n```\nk | v\n--|--\na | 1\n```"]
    );
    assert!(messages[0].pings.is_empty());
}
