//! Posts an Anthropic model's answer to a Discord channel, streamed as it is written: blocks
//! of a few hundred characters, paced like a person typing, within Discord's limits.
//!
//! ```text
//! DISCORD_BOT_TOKEN=... ANTHROPIC_API_KEY=sk-ant-... \
//!     cargo run -p replystream-connections --example discord_bot -- CHANNEL_ID "Your question"
//! ```
//! `MODEL` picks the model; `ANTHROPIC_BASE_URL` and `DISCORD_API_URL` point it at other
//! servers (a compatible proxy, a local fake).

use std::time::Duration;

use replystream::driver::{Driver, DriverOptions, StreamEvent};
use replystream::{ChannelProfile, Config, HumanDelay, OwnedInput};
use replystream_connections::HttpOptions;
use replystream_connections::discord::{self, Discord};
use replystream_connections::model::{ModelRequest, Protocol, stream_reply};
use replystream_connections::sink::PlatformSink;

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(channel), Some(prompt)) = (args.next(), args.next()) else {
        eprintln!("usage: discord_bot CHANNEL_ID PROMPT");
        std::process::exit(2);
    };
    let var = |name: &str| std::env::var(name).map_err(|_| format!("set {name}"));
    let token = var("DISCORD_BOT_TOKEN").unwrap();
    let key = var("ANTHROPIC_API_KEY").unwrap();
    let model = var("MODEL").unwrap_or_else(|_| "claude-sonnet-4-5".into());
    let base = var("ANTHROPIC_BASE_URL").unwrap_or_else(|_| "https://api.anthropic.com/v1".into());
    let api = var("DISCORD_API_URL").unwrap_or_else(|_| discord::DEFAULT_API_URL.into());

    // Every platform call is printed; the turn's outcome ends the program.
    let (done, outcome) = std::sync::mpsc::channel();
    let discord = Discord::with_options(&token, &api, &HttpOptions::default());
    let sink = PlatformSink::new(discord)
        .on_delivery(|r| {
            println!(
                "{} {} -> {:?}",
                r.send.op.name(),
                r.send.kind.name(),
                r.outcome
            )
        })
        .on_event(move |_, event| {
            if let StreamEvent::Idle(o) = event {
                let _ = done.send(o.clone());
            }
        });
    let driver = Driver::spawn(sink, DriverOptions::default());
    let mut config = Config::for_channel(&ChannelProfile::DISCORD);
    config.human_delay = HumanDelay::Natural;
    let stream = driver
        .open(&channel, config, 1)
        .expect("a valid configuration");

    let request = ModelRequest::new(Protocol::Anthropic, &base, &key, &model, &prompt);
    match stream_reply(&request, |input| drop(stream.push(input))) {
        Ok(()) => stream.finish().unwrap(),
        Err(e) => stream
            .push(OwnedInput::Fail {
                error: e.to_string(),
            })
            .unwrap(),
    }
    let outcome = outcome.recv_timeout(Duration::from_secs(300));
    driver.shutdown(Duration::from_secs(5));
    match outcome {
        Ok(o) if o.all_delivered() => println!("delivered"),
        other => {
            eprintln!("not everything was delivered: {other:?}");
            std::process::exit(1);
        }
    }
}
