//! The names of the crate's small enums (engines, thinking modes, spellings, fits, precisions, evidence
//! formats), written
//! once: [`named_enum!`] gives each its `ALL`, the `name()` users type and reports show, `Display`, and a
//! `FromStr` that takes the name or an alias whatever its case and separators (`trt_llm`, `TRT-LLM`).

/// A name as every lookup compares it, lower-case letters and digits only: `MiniMax-M3` and `minimax_m3`,
/// `nv-fp4` and `NVFP4` compare equal.
pub(crate) fn fold(name: &str) -> String {
    name.chars().filter(char::is_ascii_alphanumeric).map(|c| c.to_ascii_lowercase()).collect()
}

/// Implements `ALL`, `name()`, `Display` and `FromStr` for a field-less enum from one table of
/// `Variant = "name" | "alias" …`; an unknown name is an [`crate::Error::Invalid`] of `field` that lists
/// every name.
macro_rules! named_enum {
    ($ty:ident, field = $field:literal, what = $what:literal,
     [$($variant:ident = $name:literal $(| $alias:literal)*),+ $(,)?]) => {
        impl $ty {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$ty] = &[$($ty::$variant),+];

            /// The name users type and reports show.
            pub fn name(self) -> &'static str {
                match self {
                    $($ty::$variant => $name),+
                }
            }
        }

        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }

        impl std::str::FromStr for $ty {
            type Err = crate::error::Error;
            fn from_str(s: &str) -> crate::error::Result<Self> {
                let wanted = crate::names::fold(s);
                $(
                    if wanted == crate::names::fold($name) $(|| wanted == crate::names::fold($alias))* {
                        return Ok($ty::$variant);
                    }
                )+
                Err(crate::error::Error::invalid(
                    $field,
                    format!("unknown {} '{}'; expected one of {}", $what, s.trim(), [$($name),+].join(", ")),
                ))
            }
        }
    };
}

pub(crate) use named_enum;

#[cfg(test)]
mod tests {
    use crate::accept::fit::FitKind;
    use crate::curve::ThinkingMode;
    use crate::engine::Engine;
    use crate::evidence::InputFormat;
    use crate::perf::profile::Precision;
    use crate::units::Spelling;

    /// Every name reads back as its variant, and an unknown one is refused with every name listed.
    fn round_trip<T>(all: &[T], name: fn(&T) -> &'static str)
    where
        T: std::str::FromStr<Err = crate::Error> + PartialEq + std::fmt::Debug,
    {
        for v in all {
            assert_eq!(&name(v).parse::<T>().unwrap(), v);
            assert_eq!(&name(v).to_ascii_uppercase().replace('-', "_").parse::<T>().unwrap(), v);
        }
        let err = "no-such".parse::<T>().unwrap_err().to_string();
        assert!(all.iter().all(|v| err.contains(name(v))), "{err}");
    }

    #[test]
    fn every_name_reads_back_whatever_its_case_and_separators() {
        round_trip(Engine::ALL, |e| e.name());
        round_trip(Spelling::ALL, |s| s.name());
        round_trip(FitKind::ALL, |k| k.name());
        round_trip(Precision::ALL, |p| p.name());
        round_trip(InputFormat::ALL, |f| f.name());
        round_trip(ThinkingMode::ALL, |m| m.name());
        assert_eq!("TensorRT-LLM".parse::<Engine>().unwrap(), Engine::Trtllm);
        assert_eq!("nvfp4".parse::<Precision>().unwrap(), Precision::Fp4);
        // Separators never matter, as they never did for precisions, curves and profiles.
        for (written, engine) in [("trt-llm", Engine::Trtllm), ("llama.cpp", Engine::Llamacpp)] {
            assert_eq!(written.parse::<Engine>().unwrap(), engine);
        }
        assert_eq!("NV-FP4".parse::<Precision>().unwrap(), Precision::Fp4);
        assert_eq!("fp8_e4m3".parse::<Precision>().unwrap(), Precision::Fp8);
        assert_eq!("atom".parse::<InputFormat>().unwrap(), InputFormat::AtomJson);
    }
}
