//! Who renders a recipe's chat prompts, as its `frontend:` section states it.
//!
//! srtctl starts the frontend the section names (`type`, "dynamo" when the section leaves it out; NVIDIA
//! srt-slurm `FrontendConfig`). Dynamo's frontend renders with the chat processor its
//! `--dyn-chat-processor` flag picks (`args: {dyn-chat-processor: vllm}`, or `DYN_CHAT_PROCESSOR` in its
//! environment): `dynamo` (the default) is its own Rust preprocessor, `vllm` or `sglang` the engine's own
//! renderer (Dynamo docs, "Chat Processors"). Any other frontend (`sglang`, `vllm`) forwards requests to
//! the workers, whose engine renders. A recipe with no `frontend:` section states nothing here.

use crate::engine::Engine;
use crate::pins::thinking::Renderer;
use crate::pins::{Fact, How, Location};
use crate::yaml::{Node, Value};

/// The renderer the recipe at `rel` states, with the line that decides it; `None` where it states none or
/// names a frontend or chat processor alsim does not know.
pub(crate) fn renderer(rel: &str, root: &Node) -> Option<Fact<Renderer>> {
    let frontend = root.get("frontend").filter(|f| matches!(f.value, Value::Map(_)))?;
    let text = |node: &Node| node.as_scalar_text().map(|t| t.trim().to_ascii_lowercase());
    let at = |node: &Node| Some(Location::new(rel, node.line));
    let kind = frontend.get("type");
    let kind_text = kind.and_then(text).unwrap_or_else(|| "dynamo".to_string());
    if kind_text != "dynamo" {
        let engine = kind_text.parse::<Engine>().ok()?;
        let says = format!("frontend.type: {kind_text} (the workers' {} renders)", engine.display_name());
        return Some(Fact::known(Renderer::Engine(engine), How::Literal, says, at(kind?)));
    }
    let processor = [("args", "dyn-chat-processor"), ("args", "dyn_chat_processor"), ("env", "DYN_CHAT_PROCESSOR")]
        .into_iter()
        .find_map(|(block, key)| Some((format!("frontend.{block}.{key}"), frontend.get(block)?.get(key)?)));
    match processor {
        Some((key, node)) => {
            let name = text(node)?;
            let renderer = if name == "dynamo" { Renderer::Dynamo } else { Renderer::Engine(name.parse().ok()?) };
            Some(Fact::known(renderer, How::Literal, format!("{key}: {name}"), at(node)))
        }
        None => {
            let (says, how, line) = match kind {
                Some(node) => ("frontend.type: dynamo", How::Literal, node),
                None => ("frontend: without a type (srtctl's default, dynamo)", How::Default, frontend),
            };
            Some(Fact::known(Renderer::Dynamo, how, says, at(line)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Option<Fact<Renderer>> {
        let (root, _) = crate::yaml::parse_like_pyyaml(text, "r.yaml").unwrap();
        renderer("r.yaml", &root)
    }

    #[test]
    fn the_frontend_and_its_chat_processor_name_the_renderer() {
        let dynamo = read("name: x\nfrontend:\n  type: dynamo\n  enable_multiple_frontends: false\n").unwrap();
        assert_eq!((dynamo.value, dynamo.at), (Some(Renderer::Dynamo), Some(Location::new("r.yaml", 3))));
        let vllm = read("frontend:\n  type: dynamo\n  args:\n    dyn-chat-processor: vllm\n").unwrap();
        assert_eq!((vllm.value, vllm.at.unwrap().line), (Some(Renderer::Engine(Engine::Vllm)), Some(4)));
        assert_eq!(vllm.text, "frontend.args.dyn-chat-processor: vllm");
        let quoted = read("frontend:\n  type: \"dynamo\"\n  args:\n    dyn-chat-processor: \"dynamo\"\n").unwrap();
        assert_eq!(quoted.value, Some(Renderer::Dynamo));
        let env = read("frontend:\n  env:\n    DYN_CHAT_PROCESSOR: sglang\n").unwrap();
        assert_eq!(env.value, Some(Renderer::Engine(Engine::Sglang)));
        let router = read("frontend: {type: sglang, enable_multiple_frontends: false}\n").unwrap();
        assert_eq!(router.value, Some(Renderer::Engine(Engine::Sglang)));
        // srtctl's default type is Dynamo's frontend; a recipe without the section states nothing.
        assert_eq!(read("frontend:\n  enable_multiple_frontends: false\n").unwrap().how, How::Default);
        assert!(read("backend:\n  type: vllm\n").is_none());
        // A processor or frontend alsim does not know decides nothing.
        assert!(read("frontend:\n  args:\n    dyn-chat-processor: mine\n").is_none());
        assert!(read("frontend:\n  type: nginx\n").is_none());
    }
}
