//! A tool result with media, in a natively rendered plan's provider terms (`providerOutput`):
//! Anthropic's `tool_result` content (text and `image` blocks, base64 sources), or OpenAI's
//! `function_call_output` item whose output is a list (`input_text`, `input_image` with a data
//! URL). Media a provider does not take never get here (`Media::refuse`): what is left is text.

use super::render::Rendering;
use crate::output::{ModelOutput, Part};
use serde_json::{json, Value};

/// What the host sends back for a call whose output is `content`, under a plan rendered
/// `rendering`; `None` for a portable plan or an output with no media.
pub fn provider_output(rendering: Rendering, call_id: &str, output: &ModelOutput) -> Option<Value> {
    let ModelOutput::Content(parts) = output else { return None };
    match rendering {
        // A Gemini plan is the portable plan in Gemini's words: the host converts `output`.
        Rendering::Portable | Rendering::Gemini => None,
        Rendering::Anthropic => Some(Value::Array(parts.iter().map(anthropic_block).collect())),
        Rendering::Openai => {
            let items: Vec<Value> = parts.iter().map(openai_item).collect();
            Some(json!({"type": "function_call_output", "call_id": call_id, "output": items}))
        }
    }
}

fn anthropic_block(part: &Part) -> Value {
    match part {
        Part::ImageData { data, media_type } => {
            json!({"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}})
        }
        Part::Text { text } => json!({"type": "text", "text": text}),
        other => json!({"type": "text", "text": other.placeholder(Some("Anthropic takes no such file in a tool result")).text()}),
    }
}

fn openai_item(part: &Part) -> Value {
    match part {
        // High detail: the rule its tokens were counted by (`budget`).
        Part::ImageData { data, media_type } => json!({"type": "input_image", "image_url": format!("data:{media_type};base64,{data}"), "detail": "high"}),
        Part::Text { text } => json!({"type": "input_text", "text": text}),
        other => json!({"type": "input_text", "text": other.placeholder(Some("OpenAI takes no such file in a tool result")).text()}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_provider_shape() {
        let out = ModelOutput::Content(vec![Part::Text { text: "shot".into() }, Part::ImageData { data: "AAAA".into(), media_type: "image/png".into() }]);
        assert_eq!(
            provider_output(Rendering::Anthropic, "c", &out).unwrap(),
            json!([{"type": "text", "text": "shot"}, {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}])
        );
        assert_eq!(
            provider_output(Rendering::Openai, "call_1", &out).unwrap(),
            json!({"type": "function_call_output", "call_id": "call_1", "output": [
                {"type": "input_text", "text": "shot"},
                {"type": "input_image", "image_url": "data:image/png;base64,AAAA", "detail": "high"}
            ]})
        );
        assert_eq!(provider_output(Rendering::Portable, "c", &out), None);
        // A native rendering is its provider's reader whatever the model.
        assert_eq!(Rendering::Anthropic.reader(Some("gpt-4o")), crate::media::Reader::Anthropic);
        assert_eq!(Rendering::Gemini.reader(Some("claude-sonnet-4-5")), crate::media::Reader::Anthropic);
        assert_eq!(provider_output(Rendering::Anthropic, "c", &ModelOutput::Text("t".into())), None);
    }
}
