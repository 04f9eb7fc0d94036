//! A Telegram bot that answers every message with a model's reply, streamed into the chat
//! as a live preview (one message, edited as the reply grows, then finalized in place).
//!
//! ```text
//! TELEGRAM_BOT_TOKEN=123:abc OPENAI_API_KEY=sk-... \
//!     cargo run -p replystream-connections --example telegram_bot
//! ```
//! `OPENAI_BASE_URL` and `MODEL` point it at any OpenAI-compatible server and model;
//! `TELEGRAM_API_URL` at a self-hosted Bot API server.

use std::time::Duration;

use replystream::driver::{Driver, DriverOptions};
use replystream::{ChannelProfile, Config, OwnedInput, PreviewMode};
use replystream_connections::HttpOptions;
use replystream_connections::model::{ModelRequest, Protocol, stream_reply};
use replystream_connections::sink::PlatformSink;
use replystream_connections::telegram::{self, Telegram};

fn main() {
    let var = |name: &str| std::env::var(name).map_err(|_| format!("set {name}"));
    let token = var("TELEGRAM_BOT_TOKEN").unwrap();
    let key = var("OPENAI_API_KEY").unwrap();
    let base = var("OPENAI_BASE_URL").unwrap_or_else(|_| "https://api.openai.com/v1".into());
    let model = var("MODEL").unwrap_or_else(|_| "gpt-4o-mini".into());
    let api = var("TELEGRAM_API_URL").unwrap_or_else(|_| telegram::DEFAULT_API_URL.into());
    let bot = || Telegram::with_options(&token, &api, &HttpOptions::default());

    // The driver runs every chat's engine; the sink delivers on a pool of HTTP workers.
    let sink = PlatformSink::new(bot());
    // The model's [[reply_to_current]] replies to the message its turn answers.
    let current = sink.current_messages();
    let driver = Driver::spawn(sink, DriverOptions::default());
    let mut config = Config::for_channel(&ChannelProfile::TELEGRAM);
    config.preview = PreviewMode::Partial;

    let poller = bot();
    let mut offset = 0;
    loop {
        let messages = match poller.updates(offset, 25) {
            Ok((next, messages)) => {
                offset = next;
                messages
            }
            Err(failure) => {
                eprintln!("getUpdates: {}", failure.reason);
                std::thread::sleep(Duration::from_secs(5));
                continue;
            }
        };
        for message in messages {
            // One turn per message; a second message in a busy chat waits its turn.
            let stream = driver
                .open(&message.chat, config.clone(), message.update_id as u64)
                .expect("a valid configuration");
            current.set(stream.id(), &message.message_id);
            let request =
                ModelRequest::new(Protocol::OpenAiChat, &base, &key, &model, &message.text);
            std::thread::spawn(move || {
                match stream_reply(&request, |input| drop(stream.push(input))) {
                    Ok(()) => drop(stream.finish()),
                    Err(e) => drop(stream.push(OwnedInput::Fail {
                        error: e.to_string(),
                    })),
                }
            });
        }
    }
}
