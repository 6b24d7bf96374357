//! `alsim predict` and `alsim calibrate`: the seed's case on embedded defaults (best k, band, frontier), every
//! output format, the drafter comparison, user profile files, calibration of step times and serving pairs,
//! and bad input.

use crate::util::{json, run};

fn best(v: &serde_json::Value) -> &Vec<serde_json::Value> {
    v["sweeps"][0]["best"].as_array().unwrap()
}

/// The cells of `predict`'s grid of speedups: per concurrency, each k's cell (`2.49x*`).
fn grid(stdout: &str) -> Vec<(u64, Vec<(u64, String)>)> {
    let header = stdout.lines().find(|l| l.starts_with("concurrency ")).unwrap_or_else(|| panic!("{stdout}"));
    let ks: Vec<u64> =
        header.split_whitespace().filter_map(|h| h.strip_prefix("k=")).map(|k| k.parse().unwrap()).collect();
    stdout
        .lines()
        .skip_while(|l| !l.starts_with("concurrency "))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .map(|l| {
            let cells: Vec<&str> = l.split_whitespace().collect();
            let cells_of_k = ks.iter().zip(&cells[1..]).map(|(k, c)| (*k, c.to_string())).collect();
            (cells[0].parse().unwrap(), cells_of_k)
        })
        .collect()
}

#[test]
fn the_default_answer_is_a_grid_with_the_best_k_and_its_band_marked() {
    let (code, stdout, stderr) = run(&["predict"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stdout.contains("tok/s/user") && stdout.contains("--long"), "the grid alone: {stdout}");
    let v = json(&["predict"]);
    let grid = grid(&stdout);
    assert_eq!(grid.len(), best(&v).len(), "a row per concurrency: {stdout}");
    for ((concurrency, cells), b) in grid.iter().zip(best(&v)) {
        assert_eq!(*concurrency, b["concurrency"].as_u64().unwrap());
        let marked =
            |mark: char| -> Vec<u64> { cells.iter().filter(|(_, c)| c.ends_with(mark)).map(|(k, _)| *k).collect() };
        assert_eq!(marked('*'), vec![b["best_k"].as_u64().unwrap()], "{stdout}");
        let mut band = marked('+');
        band.extend(marked('*'));
        band.sort_unstable();
        let want: Vec<u64> = b["band"].as_array().unwrap().iter().map(|k| k.as_u64().unwrap()).collect();
        assert_eq!(band, want, "{stdout}");
        // The best k's cell is its speedup.
        let shown = &cells.iter().find(|(_, c)| c.ends_with('*')).unwrap().1;
        assert_eq!(shown.trim_end_matches(['x', '*']), format!("{:.2}", b["speedup"].as_f64().unwrap()));
    }
}

#[test]
fn seed_case_gives_best_k_band_and_frontier() {
    let (code, stdout, stderr) = run(&["predict", "--long"]);
    assert_eq!(code, 0, "{stderr}");
    for want in [
        "AMD Instinct MI355X x4",
        "inferact-minimax-m3-eagle3",
        "Best k per concurrency",
        "band",
        "Pareto frontier",
        "minimaxm3_eagle3.yaml",
    ] {
        assert!(stdout.contains(want), "missing {want} in\n{stdout}");
    }
    let v = json(&["predict"]);
    assert_eq!(v["schema_version"], "3");
    assert_eq!(v["model_error"], 0.05);
    let sweep = &v["sweeps"][0];
    assert_eq!((sweep["hardware"].as_str(), sweep["tp"].as_u64()), (Some("mi355x"), Some(4)));
    let predictions = sweep["predictions"].as_array().unwrap();
    assert_eq!(predictions.len(), 5 * 9, "concurrency 1,4,8,12,16 x k 0..8");
    assert!((predictions[3]["al"].as_f64().unwrap() - 2.83).abs() < 1e-12);
    let concurrency: Vec<u64> = best(&v).iter().map(|b| b["concurrency"].as_u64().unwrap()).collect();
    assert_eq!(concurrency, vec![1, 4, 8, 12, 16]);
    for b in best(&v) {
        let band: Vec<u64> = b["band"].as_array().unwrap().iter().map(|k| k.as_u64().unwrap()).collect();
        let (best_k, top) = (b["best_k"].as_u64().unwrap(), b["top_k"].as_u64().unwrap());
        assert!(best_k > 0, "speculation pays on the seed's case: {b}");
        assert_eq!(top, best_k, "the top k of the band is chosen: {b}");
        assert!(band.contains(&top) && b["toss_up"] == (band.len() > 1), "{b}");
        assert!(b["runner_up"].as_u64().is_some() && b["margin_pct"].as_f64().unwrap() >= 0.0);
    }
    // The speedup of the chosen k falls as concurrency grows.
    let speedup: Vec<f64> = best(&v).iter().map(|b| b["speedup"].as_f64().unwrap()).collect();
    assert!(speedup.windows(2).all(|w| w[1] < w[0]), "{speedup:?}");
    let frontier = sweep["frontier"].as_array().unwrap();
    assert!(!frontier.is_empty() && frontier.iter().all(|f| f["k"].as_u64().is_some()));
    // A wider error widens the band; a tiny one leaves the top k alone.
    let wide = json(&["predict", "--model-error", "20"]);
    let narrow = json(&["predict", "--model-error", "0.01"]);
    for ((w, n), b) in best(&wide).iter().zip(best(&narrow)).zip(best(&v)) {
        assert!(w["band"].as_array().unwrap().len() >= b["band"].as_array().unwrap().len());
        assert_eq!(n["best_k"], n["top_k"]);
    }
    // The objective picks inside the same band: the default and per-user its top, smallest-k its smallest.
    let smallest = json(&["predict", "--model-error", "20", "--objective", "smallest-k"]);
    let per_user = json(&["predict", "--model-error", "20", "--objective", "per-user"]);
    let mut differs = false;
    for ((t, w), u) in best(&wide).iter().zip(best(&smallest)).zip(best(&per_user)) {
        assert_eq!((w["objective"].as_str(), w["band_error"].as_f64()), (Some("smallest-k"), Some(0.2)));
        assert_eq!(w["best_k"], w["band"][0]);
        assert_eq!(
            (t["band"].clone(), t["best_k"].clone(), t["objective"].as_str()),
            (w["band"].clone(), t["top_k"].clone(), Some("throughput"))
        );
        assert_eq!((u["best_k"].clone(), u["objective"].as_str()), (t["best_k"].clone(), Some("per-user")));
        differs |= w["best_k"] != t["best_k"];
    }
    assert!(differs, "a 20 % band holds more than the top k somewhere");
    // Each draft position carries what it adds and what it costs, by part; --why says where k stops and why.
    let marginal = &v["sweeps"][0]["predictions"][1]["marginal"];
    assert!(
        marginal["gain"].as_f64().unwrap() > 0.0 && marginal["parts"]["drafter_lm_head_ms"].as_f64().unwrap() > 0.0
    );
    assert!(v["sweeps"][0]["predictions"][0]["marginal"].is_null(), "k = 0 has no position before it");
    let (code, why, _) = run(&["predict", "--why", "--concurrency", "1,64"]);
    assert_eq!(code, 0);
    for b in [1, 64] {
        let at = why.find(&format!("B = {b}: k stops at")).unwrap_or_else(|| panic!("no line for B = {b}: {why}"));
        assert!(why[at..].contains("tokens per step") && why[at..].contains("mostly"), "{why}");
    }
    let (code, _, stderr) = run(&["predict", "--objective", "latency"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--objective") && stderr.contains("smallest-k"), "{stderr}");
}

#[test]
fn formats_flags_and_sweep_over_all_hardware() {
    let (code, csv, _) = run(&["predict", "--format", "csv", "--concurrency", "1-3", "--max-k", "4"]);
    assert_eq!(code, 0);
    assert!(csv.starts_with("concurrency,k,AL,step ms"), "one table, its header first: {csv}");
    let (code, md, _) = run(&["predict", "--format", "md", "--concurrency", "2"]);
    assert_eq!(code, 0);
    assert!(md.contains("| concurrency | best k | band |"), "{md}");
    let v = json(&["predict", "--hardware", "all", "--tp", "8", "--concurrency", "1-64"]);
    let sweeps = v["sweeps"].as_array().unwrap();
    assert_eq!(sweeps.len(), 7);
    assert!(sweeps.iter().all(|s| s["predictions"].as_array().unwrap().len() == 64 * 9));
    let v = json(&[
        "predict",
        "--drafter",
        "Inferact/MiniMax-M3-EAGLE3-GQA",
        "--context",
        "8192",
        "--kv-dtype",
        "fp8",
        "--precision",
        "fp8",
        "--min-user-tps",
        "150",
    ]);
    let sweep = &v["sweeps"][0];
    assert_eq!(sweep["drafter"], "inferact-minimax-m3-eagle3-gqa");
    assert_eq!(v["acceptance"]["al"][3], 2.78);
    assert_eq!(v["workloads"][0]["kind"], "decode");
    for b in best(&v).iter().filter(|b| b["best_k"].is_u64()) {
        let row = sweep["predictions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["concurrency"] == b["concurrency"] && r["k"] == b["best_k"]);
        assert!(row.unwrap()["per_user_tps"].as_f64().unwrap() >= 150.0);
    }
    let v = json(&[
        "predict",
        "--model",
        "glm-5.2",
        "--tp",
        "8",
        "--hardware",
        "b300",
        "--isl",
        "8192",
        "--osl",
        "1024",
        "--prefix-hit",
        "0.9",
    ]);
    assert_eq!(v["sweeps"][0]["drafter"], "glm-5.2-mtp");
    let v = json(&["predict", "--al", "1.8,2.4", "--concurrency", "4"]);
    assert_eq!(v["sweeps"][0]["predictions"].as_array().unwrap().len(), 3);
    // The embedded set covers DeepSeek-R1 with its MTP head and three models with EAGLE3 drafters.
    for (model, drafter, tp) in [
        ("deepseek-r1", "dsr1-mtp", "8"),
        ("gpt-oss-120b", "gpt-oss-120b-eagle3", "1"),
        ("llama-3.1-8b", "llama-3.1-8b-eagle3", "1"),
        ("qwen3-8b", "qwen3-8b-eagle3", "1"),
    ] {
        let v = json(&[
            "predict",
            "--model",
            model,
            "--hardware",
            "b200",
            "--tp",
            tp,
            "--al",
            "1.8,2.3,2.6",
            "--concurrency",
            "1,64",
        ]);
        assert_eq!(v["sweeps"][0]["drafter"], drafter);
        let speedup: Vec<f64> = best(&v).iter().map(|b| b["speedup"].as_f64().unwrap()).collect();
        assert!(speedup[1] < speedup[0], "{model}: {speedup:?}");
    }
}

#[test]
fn eagle3_against_eagle3_gqa_per_concurrency_and_context() {
    let v = json(&[
        "predict",
        "--versus",
        "Inferact/MiniMax-M3-EAGLE3-GQA",
        "--context",
        "2048,131072",
        "--concurrency",
        "1,64",
    ]);
    assert_eq!(v["sweeps"].as_array().unwrap().len(), 4, "2 contexts x 2 drafters");
    let gqa =
        v["sweeps"].as_array().unwrap().iter().find(|s| s["drafter"] == "inferact-minimax-m3-eagle3-gqa").unwrap();
    assert_eq!(gqa["acceptance"]["al"][3], 2.78, "each drafter on its own golden curve");
    let comparison = v["comparison"].as_array().unwrap();
    assert_eq!(comparison.len(), 4);
    let at = |context: &str, b: u64| {
        comparison.iter().find(|c| c["workload"] == format!("context {context}") && c["concurrency"] == b).unwrap()
    };
    // At long context and large batch the MHA drafter's own KV reads decide it; at short context the two are
    // within the model's error.
    let long = at("131072", 64);
    assert_eq!(long["winner"], "inferact-minimax-m3-eagle3-gqa");
    assert_eq!(long["toss_up"], false);
    assert!(long["margin_pct"].as_f64().unwrap() > 20.0, "{long}");
    assert_eq!(at("2048", 1)["toss_up"], true);
    let versus = ["predict", "--versus", "Inferact/MiniMax-M3-EAGLE3-GQA", "--concurrency", "8"];
    let (code, table, _) = run(&versus);
    assert_eq!(code, 0);
    assert!(table.contains("Drafters compared"), "{table}");
    // On a terminal, a row per concurrency: each drafter's best k and throughput, the winner by its letter.
    let c = &json(&versus)["comparison"][0];
    let row =
        table.lines().skip_while(|l| !l.starts_with("concurrency A: k")).nth(1).unwrap_or_else(|| panic!("{table}"));
    let cells: Vec<&str> = row.split_whitespace().collect();
    let drafters = c["drafters"].as_array().unwrap();
    assert_eq!(
        (cells[0], cells[1], cells[3]),
        ("8", &*drafters[0]["best_k"].to_string(), &*drafters[1]["best_k"].to_string()),
        "{table}"
    );
    let winner = if c["winner"] == drafters[0]["drafter"] { "A" } else { "B" };
    assert_eq!(cells[5], winner, "{table}");
}

fn acceptance(v: &serde_json::Value) -> Vec<Option<f64>> {
    v["acceptance"]["al"].as_array().unwrap().iter().map(serde_json::Value::as_f64).collect()
}

fn swept_k(v: &serde_json::Value) -> Vec<u64> {
    let rows = v["sweeps"][0]["predictions"].as_array().unwrap();
    rows.iter().filter(|r| r["concurrency"] == rows[0]["concurrency"]).map(|r| r["k"].as_u64().unwrap()).collect()
}

#[test]
fn acceptance_from_a_fitted_chain_or_real_evidence() {
    // A fitted chain stays near the golden points and extends past k = 8.
    let v = json(&["predict", "--fit", "concave", "--max-k", "12", "--concurrency", "1,16"]);
    let al = acceptance(&v);
    assert_eq!(al.len(), 13);
    for (k, golden) in [(1, 1.78), (2, 2.38), (3, 2.83)] {
        assert!((al[k].unwrap() - golden).abs() < 0.05, "k = {k}: {al:?}");
    }
    assert!(al.windows(2).all(|w| w[1].unwrap() >= w[0].unwrap()), "AL never falls with k: {al:?}");
    assert!(v["acceptance"]["description"].as_str().unwrap().ends_with("concave fit"));
    assert_eq!(swept_k(&v), (0..=12).collect::<Vec<_>>());

    // vLLM logs count positions: AL(1..3) are the same numbers `alsim eval` estimates.
    let log = "tests/fixtures/evidence/vllm_mtbench.log";
    let v = json(&["predict", "--evidence", log, "--concurrency", "1,16"]);
    // 40 log intervals make a short series: a wide tolerance keeps this a consistent (exit 0) reading.
    let eval = json(&["eval", log, "--pin", "2.7", "--k", "3", "--tolerance", "0.1"]);
    let estimate = &eval["files"][0]["estimate"];
    let al = acceptance(&v);
    assert_eq!(al.len(), 9, "{al:?}");
    assert!((al[3].unwrap() - estimate["independent"]["point_estimate"].as_f64().unwrap()).abs() < 1e-9);
    let p1 = estimate["positions"][0]["unconditional"]["point_estimate"].as_f64().unwrap();
    assert!((al[1].unwrap() - 1.0 - p1).abs() < 1e-9);
    assert!(al[4..].iter().all(Option::is_none), "nothing measured past the run's k: {al:?}");
    assert_eq!(swept_k(&v), vec![0, 1, 2, 3]);

    // SGLang counts accepted tokens only: AL at its k alone, unless a fit extends it.
    let prom = "tests/fixtures/evidence/sglang_gsm8k.prom";
    let v = json(&["predict", "--evidence", prom, "--concurrency", "1"]);
    assert_eq!(swept_k(&v), vec![0, 3]);
    let (code, table, _) = run(&["predict", "--evidence", prom, "--concurrency", "1"]);
    assert_eq!(code, 0);
    assert!(table.contains("1.00, –, –, 3.5") && table.contains("not measured"), "{table}");
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("k.svg");
    assert_eq!(run(&["predict", "--evidence", prom, "--plot", svg.to_str().unwrap()]).0, 0);
    let svg = std::fs::read_to_string(svg).unwrap();
    assert!(svg.contains("k = 3") && !svg.contains("k = 1<"), "the chart draws only the k swept");
    let fitted = json(&["predict", "--evidence", prom, "--fit", "constant-alpha", "--concurrency", "1"]);
    let al = acceptance(&fitted);
    assert!((al[3].unwrap() - acceptance(&v)[3].unwrap()).abs() < 1e-3, "the fit passes through its one point");
    assert_eq!(swept_k(&fitted), (0..=8).collect::<Vec<_>>());

    // Explicit values can be fitted too.
    let v = json(&["predict", "--al", "1.8,2.4,2.85", "--fit", "geometric-decay", "--max-k", "6"]);
    assert_eq!(acceptance(&v).len(), 7);
}

#[test]
fn pareto_plot_is_an_svg_and_never_overwrites_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pareto.svg");
    let p = path.to_str().unwrap();
    let (code, _, stderr) = run(&["predict", "--plot", p]);
    assert_eq!(code, 0, "{stderr}");
    let svg = std::fs::read_to_string(&path).unwrap();
    assert!(
        svg.starts_with("<svg") && svg.contains("k = 3") && svg.contains("B=16") && svg.contains("Pareto frontier")
    );
    let (code, _, stderr) = run(&["predict", "--plot", p]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--force"), "{stderr}");
    assert_eq!(run(&["predict", "--plot", p, "--force"]).0, 0);
    // A .png is a PNG (rasterised from the SVG); a name of another image type is refused before any work,
    // and nothing is written under it.
    let jpg = dir.path().join("pareto.jpg");
    for command in [&["predict"][..], &["simulate", "--requests", "100", "--no-batch"][..]] {
        let png = dir.path().join(format!("{}.png", command[0]));
        let mut args = command.to_vec();
        args.extend(["--plot", png.to_str().unwrap()]);
        let (code, _, stderr) = run(&args);
        assert_eq!(code, 0, "{args:?}: {stderr}");
        let bytes = std::fs::read(&png).unwrap();
        assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n") && bytes.len() > 10_000, "{args:?}: a PNG image");
        let mut args = command.to_vec();
        args.extend(["--plot", jpg.to_str().unwrap()]);
        let (code, _, stderr) = run(&args);
        assert_eq!(code, 2, "{args:?}");
        assert!(stderr.contains("ends in .jpg, but alsim draws SVG or PNG"), "{stderr}");
        assert!(!jpg.exists(), "no SVG under a .jpg name");
    }
}

/// The title wraps instead of running off the canvas, and a per-user floor is drawn where it lies.
#[test]
fn pareto_plot_keeps_its_title_and_draws_the_per_user_floor() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pareto.svg");
    let args = ["predict", "--hardware", "b200", "--min-user-tps", "200", "--plot", path.to_str().unwrap()];
    assert_eq!(run(&args).0, 0);
    let svg = std::fs::read_to_string(&path).unwrap();
    assert!(svg.contains("per-user floor 200 tok/s"), "the floor is in the legend");
    let texts: Vec<&str> =
        svg.split("<text").skip(1).map(|t| t.split('>').nth(1).unwrap().split('<').next().unwrap().trim()).collect();
    let title: Vec<&&str> = texts.iter().skip_while(|t| !t.starts_with("minimax-m3 on NVIDIA B200")).take(2).collect();
    assert_eq!(title.len(), 2, "a title of two lines: {texts:?}");
    assert!(title[1].ends_with("frontier dashed, chosen k ringed"), "{title:?}");
    // 15-pixel sans-serif glyphs average well under 0.56 em: a line of these lengths fits the 980-pixel canvas.
    assert!(title.iter().all(|line| line.chars().count() as f64 * 15.0 * 0.56 <= 980.0 - 24.0), "{title:?}");
}

#[test]
fn user_profile_files_add_models_drafters_and_hardware() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    };
    let model = write(
        "models.csv",
        "key,aliases,name,layers,moe_layers,hidden,vocab,experts,top_k,expert_params_m,base_params_b,q_heads,kv_heads,head_dim,attn_layers,kv_elems_per_token_layer,sparse_layers,sparse_keys,index_elems_per_token,state_elems_per_seq,default_precision,source\n\
         tiny-moe,,Tiny MoE,24,24,2048,100000,64,4,12.6,1.2,16,4,128,24,1024,0,0,0,0,bf16,\"test shape\"\n",
    );
    let drafter = write(
        "drafters.csv",
        "key,target,method,block,layers,hidden,params_b,moe_layers,q_heads,kv_heads,head_dim,kv_elems_per_token,vocab,source\n\
         tiny-eagle3,tiny-moe,eagle3,false,1,2048,0.1,0,16,4,128,1024,32000,\"test shape\"\n",
    );
    let hardware = write(
        "gpu.csv",
        "key,name,hbm_gb,hbm_tb_s,bf16_tflops,fp8_tflops,fp4_tflops,link_gb_s,allreduce_us,bw_eff,flops_eff\n\
         gpu-x,GPU X,96,4.0,1000,2000,0,450,10,0.7,0.5\n",
    );
    let v = json(&[
        "predict",
        "--model-profile",
        &model,
        "--drafter-profile",
        &drafter,
        "--profile",
        &hardware,
        "--model",
        "tiny-moe",
        "--tp",
        "1",
        "--al",
        "1.7,2.2",
    ]);
    let sweep = &v["sweeps"][0];
    assert_eq!((sweep["hardware"].as_str(), sweep["drafter"].as_str()), (Some("gpu-x"), Some("tiny-eagle3")));
    assert_eq!(sweep["efficiency"]["bw_eff"], 0.7);
    let broken = write("broken.csv", "key,target,method,block,layers\nx,tiny-moe,eagle3,maybe,1\n");
    let (code, _, stderr) = run(&["predict", "--model-profile", &model, "--drafter-profile", &broken]);
    assert_eq!(code, 2);
    assert!(stderr.contains("broken.csv:2") && stderr.contains("'block'"), "{stderr}");
}

#[test]
fn calibrate_serving_pairs_per_group() {
    let v = json(&["calibrate", "tests/data/serving_pairs.csv", "--k", "3"]);
    assert_eq!(v["kind"], "serving_pairs");
    let s = &v["summary"];
    assert_eq!((s["rows"].as_u64(), s["groups"].as_u64(), s["trend_groups"].as_u64()), (Some(7), Some(2), Some(2)));
    for field in ["speedup_median_abs_rel_error", "flat_line_median_abs_rel_error", "trend_sign_agreement"] {
        assert!(s[field].as_f64().is_some(), "{field}: {s}");
    }
    let groups = v["serving"]["groups"].as_array().unwrap();
    assert_eq!(groups[0]["key"]["k"], 2, "the file's k");
    assert_eq!(groups[1]["key"]["k"], 3, "--k for the blank cells");
    assert!(groups.iter().all(|g| g["al_fitted"] == true && g["drafter"] == "dsr1-mtp"));
    let (code, _, stderr) = run(&["calibrate", "tests/data/serving_pairs.csv"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("serving_pairs.csv:8") && stderr.contains("--k"), "{stderr}");
}

/// An expert-parallel exchange file (calibration/exchange.py's format): the fit per number of GPUs gives back
/// the latency and bandwidth the synthetic file was made with (within its ±3 % wobble), each model's rows
/// are predicted from the other models' fit, and today's moe_token_us stands beside it, unchanged.
#[test]
fn calibrate_exchange_recovers_the_link_a_file_was_made_with() {
    let input = "tests/data/ep_exchange_synthetic.csv";
    let v = json(&["calibrate", input]);
    assert_eq!(v["kind"], "exchange");
    let groups = v["exchange"]["groups"].as_array().unwrap();
    for (group, gpus, latency, bandwidth) in [(&groups[0], 2, 25.0, 150.0), (&groups[1], 8, 40.0, 110.0)] {
        let fit = &group["fit"];
        assert_eq!(group["gpus"], gpus);
        assert!((fit["latency_us"].as_f64().unwrap() / latency - 1.0).abs() < 0.03, "{group}");
        assert!((fit["bandwidth_gb_s"].as_f64().unwrap() / bandwidth - 1.0).abs() < 0.03, "{group}");
        assert_eq!((group["models"].as_u64(), group["moe_token_us"].as_f64()), (Some(3), Some(1.25)));
    }
    let s = &v["summary"];
    assert!(s["exchange_held_out_median_abs_rel_error"].as_f64().unwrap() < 0.03, "{s}");
    let (code, stdout, _) = run(&["calibrate", input]);
    assert_eq!(code, 0);
    assert!(stdout.contains("moe_token_us") && stdout.contains("held out"), "{stdout}");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("points.csv");
    let p = path.to_str().unwrap();
    let (code, _, stderr) = run(&["calibrate", input, "--residuals", p]);
    assert_eq!(code, 0, "{stderr}");
    let table = alsim::perf::csv::CsvTable::parse(&std::fs::read_to_string(&path).unwrap(), p).unwrap();
    assert_eq!(table.rows().count(), 36);
    let (code, _, stderr) = run(&["calibrate", input, "--output", dir.path().join("h.csv").to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--output") && stderr.contains("exchange"), "{stderr}");
}

/// `--residuals` writes every distinct row (the report lists the largest only), each row's residual
/// following from its own measured and modelled figures; an existing file is kept without `--force`.
#[test]
fn calibrate_residuals_list_every_row_on_request() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("residuals.csv");
    let p = path.to_str().unwrap();
    for (input, rows) in [("tests/data/serving_pairs.csv", 7), ("tests/data/speedbench_eagle3.csv", 6)] {
        let (code, _, stderr) = run(&["calibrate", input, "--k", "3", "--residuals", p, "--force"]);
        assert_eq!(code, 0, "{input}: {stderr}");
        let table = alsim::perf::csv::CsvTable::parse(&std::fs::read_to_string(&path).unwrap(), p).unwrap();
        assert_eq!(table.rows().count(), rows, "{input}");
        let (measured, model) =
            if input.contains("serving") { ("measured_speedup", "model_speedup") } else { ("measured_ms", "model_ms") };
        for row in table.rows() {
            let (m, f) = (row.f64(measured).unwrap(), row.f64(model).unwrap());
            assert!(((f / m - 1.0) * 100.0 - row.f64("residual_pct").unwrap()).abs() < 0.02, "{input}");
            assert_eq!(row.count("repeats", true).unwrap(), 1);
        }
    }
    let (code, _, stderr) = run(&["calibrate", "tests/data/speedbench_eagle3.csv", "--residuals", p]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--residuals") && stderr.contains("--force"), "{stderr}");
}

/// `--score` prices the rows with the profile as it is: scoring the profile a fit wrote, on that fit's own
/// rows, gives that fit's figures; the embedded defaults score worse; nothing is written.
#[test]
fn calibrate_score_prices_rows_with_the_profile_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("b200.csv");
    let o = out.to_str().unwrap();
    let fitted = json(&["calibrate", "tests/data/speedbench_eagle3.csv", "--output", o]);
    let scored = json(&["calibrate", "tests/data/speedbench_eagle3.csv", "--score", o]);
    assert_eq!((fitted["mode"].as_str(), scored["mode"].as_str()), (Some("fit"), Some("score")));
    for figure in ["spec_off_median_abs_rel_error", "step_time_median_abs_rel_error", "step_time_max_abs_rel_error"] {
        let (f, s) = (fitted["summary"][figure].as_f64().unwrap(), scored["summary"][figure].as_f64().unwrap());
        assert!((f - s).abs() < 1e-4, "{figure}: fit {f}, score {s}");
    }
    let embedded = json(&["calibrate", "tests/data/speedbench_eagle3.csv", "--score", "profiles/hardware.csv"]);
    let error = |v: &serde_json::Value| v["summary"]["spec_off_median_abs_rel_error"].as_f64().unwrap();
    assert!(error(&embedded) > 2.0 * error(&scored), "{} vs {}", error(&embedded), error(&scored));
    let (code, _, stderr) = run(&["calibrate", "tests/data/speedbench_eagle3.csv", "--score", o, "--output", o]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--score") && stderr.contains("--output"), "{stderr}");
    let h200 = dir.path().join("h200.csv");
    let row = std::fs::read_to_string(&out).unwrap().replace("b200,\"B200;b200-hgx\"", "h200,\"H200\"");
    assert!(row.contains("\nh200,"), "{row}");
    std::fs::write(&h200, row).unwrap();
    let (code, _, stderr) = run(&["calibrate", "tests/data/speedbench_eagle3.csv", "--score", h200.to_str().unwrap()]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("speedbench_eagle3.csv:5") && stderr.contains("'b200'"), "{stderr}");
}

#[test]
fn calibrate_step_times_then_predict_with_the_profile() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("b200.csv");
    let o = out.to_str().unwrap();
    let v = json(&["calibrate", "tests/data/speedbench_eagle3.csv", "--output", o]);
    assert_eq!(v["kind"], "step_time");
    // SPEED-Bench's t_sd, from a fit on its t_ar alone.
    let s = &v["summary"];
    assert!(s["spec_off_median_abs_rel_error"].as_f64().unwrap() < 0.02, "{s}");
    assert!(s["step_time_median_abs_rel_error"].as_f64().unwrap() < 0.15, "{s}");
    assert_eq!(s["step_time_rows_over_30pct"], 0);
    assert_eq!(v["steps"]["groups"][0]["spec_rows"], 3);
    let (code, _, stderr) = run(&["calibrate", "tests/data/speedbench_eagle3.csv", "--output", o]);
    assert_eq!(code, 2, "an existing profile is never overwritten without --force");
    assert!(stderr.contains("--force"), "{stderr}");
    let v = json(&[
        "predict",
        "--profile",
        o,
        "--model",
        "llama-3.3-70b",
        "--drafter",
        "EAGLE3",
        "--al",
        "1.9,2.1,2.12",
        "--context",
        "1024",
        "--concurrency",
        "16",
        "--tp",
        "1",
        "--precision",
        "bf16",
    ]);
    let sweep = &v["sweeps"][0];
    assert_eq!(sweep["hardware"], "b200");
    let k0 = &sweep["predictions"][0];
    // Calibrated on these rows: t_ar 19.6 ms within 3 %.
    assert!((k0["step_ms"].as_f64().unwrap() / 19.6 - 1.0).abs() < 0.03, "{k0}");
}

#[test]
fn bad_input_is_a_clear_error_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let spec_only = dir.path().join("spec_only.csv");
    std::fs::write(
        &spec_only,
        "hardware,model,drafter,tp,concurrency,k,al,context,step_ms\nb200,llama-3.3-70b,EAGLE3,1,16,3,2.5,1024,25\n",
    )
    .unwrap();
    let missing = dir.path().join("missing.csv");
    std::fs::write(&missing, "hardware,model,tp,k,context,step_ms\nb200,llama-3.3-70b,1,0,1024,19.6\n").unwrap();
    let negative = dir.path().join("negative.csv");
    std::fs::write(&negative, "hardware,model,tp,concurrency,k,context,tpot_ms\nb200,llama-3.3-70b,1,16,0,1024,-2\n")
        .unwrap();
    let zero = dir.path().join("zero.prom");
    let no_steps: String =
        (0..4).map(|a| format!("atom:mtp_decode_steps_total{{accepted_tokens=\"{a}\"}} 0\n")).collect();
    std::fs::write(&zero, no_steps).unwrap();
    for (args, needle) in [
        (vec!["predict", "--hardware", "tpu-v9"], "unknown hardware 'tpu-v9'"),
        (vec!["predict", "--model", "llama-9"], "known"),
        (vec!["predict", "--tp", "3"], "query heads"),
        (vec!["predict", "--tp", "0"], "at least 1"),
        (vec!["predict", "--tp", "1", "--hardware", "h100"], "GB of weights"),
        (vec!["predict", "--concurrency", "0"], "at least 1"),
        (vec!["predict", "--concurrency=-4"], "negative"),
        (vec!["predict", "--min-user-tps", "0"], "--min-user-tps"),
        (vec!["predict", "--model-error", "0"], "--model-error"),
        (vec!["predict", "--model-error", "150"], "--model-error"),
        (vec!["predict", "--prefix-hit", "1.5"], "--prefix-hit"),
        (vec!["predict", "--osl", "0"], "--osl"),
        (vec!["predict", "--context=-5"], "--context"),
        (vec!["predict", "--al", "2.5"], "--al"),
        (vec!["predict", "--max-k", "9"], "k = 9"),
        (vec!["predict", "--max-k", "0"], "--max-k"),
        (vec!["predict", "--al", "2.5,3", "--fit", "concave"], "--al"),
        (vec!["predict", "--fit", "concave", "--max-k", "40"], "--max-k"),
        (vec!["predict", "--versus", "Inferact/MiniMax-M3-EAGLE3"], "already predicted"),
        (vec!["predict", "--versus", "no-such-drafter"], "no-such-drafter"),
        (vec!["predict", "--versus", "Inferact/MiniMax-M3-EAGLE3-GQA", "--al", "2"], "cannot be used"),
        (vec!["predict", "--evidence", "tests/fixtures/evidence/sglang_gsm8k.log"], "--evidence-k"),
        (vec!["predict", "--evidence", "/nonexistent/m.prom"], "/nonexistent/m.prom"),
        (vec!["predict", "--evidence-k", "3"], "--evidence"),
        (vec!["predict", "--al", "2", "--evidence", "tests/fixtures/evidence/vllm_mtbench.log"], "cannot be used"),
        (
            vec![
                "predict",
                "--evidence",
                "tests/fixtures/evidence/vllm_mtbench.log",
                "--evidence",
                "tests/fixtures/evidence/sglang_gsm8k.log",
                "--evidence-k",
                "4",
            ],
            "the evidence is for k = 3, not the k = 4 given for it",
        ),
        (
            vec![
                "predict",
                "--evidence",
                zero.to_str().unwrap(),
                "--evidence",
                "tests/fixtures/evidence/atom_mtbench.prom",
            ],
            "zero.prom:1: the evidence counts no verification steps",
        ),
        (
            vec!["predict", "--evidence", "tests/fixtures/evidence/sglang_gsm8k.prom", "--fit", "concave"],
            "constant-alpha",
        ),
        (
            vec!["predict", "--evidence", "tests/fixtures/evidence/sglang_gsm8k.log", "--evidence-k", "0"],
            "--evidence-k",
        ),
        (vec!["predict", "--evidence", "tests/fixtures/evidence/vllm_mtbench.log", "--curve", "x.yaml"], "--curve"),
        (vec!["predict", "--al", "1.8", "--golden", "golden"], "--golden"),
        (vec!["predict", "--decode-log-interval", "20"], "give --evidence"),
        (vec!["predict", "--al", "1.8,2.4", "--max-k", "5"], "add --fit"),
        (vec!["predict", "--max-k", "40"], "--max-k"),
        (vec!["predict", "--kv-dtype", "fp4"], "--kv-dtype"),
        (vec!["predict", "--profile", "/nonexistent/p.csv"], "/nonexistent/p.csv"),
        (vec!["predict", "--model-profile", "/nonexistent/m.csv"], "/nonexistent/m.csv"),
        (vec!["predict", "--drafter-profile", "tests/data/serving_pairs.csv"], "serving_pairs.csv"),
        (vec!["calibrate", "/nonexistent/m.csv"], "/nonexistent/m.csv"),
        (vec!["calibrate", spec_only.to_str().unwrap()], "k = 0"),
        (vec!["calibrate", missing.to_str().unwrap()], "missing column(s) concurrency"),
        (vec!["calibrate", negative.to_str().unwrap()], "must be > 0"),
        (vec!["calibrate", "tests/data/serving_pairs.csv", "--k", "0"], "--k"),
    ] {
        let (code, _, stderr) = run(&args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: expected '{needle}' in {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

/// SPEED-Bench's level rows (`tests/data/speedbench_level.csv`): no spec-off TPOT, so nothing is fitted and
/// `calibrate` equals `--score` with the embedded profile; each row's predicted speedup is what `predict` gives
/// for that deployment at that AL, and the level is their median error. A group with TPOT on some rows only
/// is refused, naming the line.
#[test]
fn calibrate_scores_the_level_of_rows_without_spec_off_times() {
    let file = "tests/data/speedbench_level.csv";
    let fitted = json(&["calibrate", file]);
    let scored = json(&["calibrate", file, "--score", "profiles/hardware.csv"]);
    let s = &fitted["summary"];
    assert!(s["spec_off_median_abs_rel_error"].is_null(), "{s}");
    assert_eq!(s["al_fitted_groups"], 0);
    assert_eq!(s["level_median_abs_rel_error"], scored["summary"]["level_median_abs_rel_error"]);
    let text = std::fs::read_to_string(file).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let header: Vec<&str> = lines.iter().find(|l| !l.starts_with('#')).unwrap().split(',').collect();
    let al_column = header.iter().position(|c| *c == "al").unwrap();
    let mut errors = Vec::new();
    for group in fitted["serving"]["groups"].as_array().unwrap() {
        let key = &group["key"];
        for point in group["points"].as_array().unwrap() {
            let line = point["line"].as_u64().unwrap() as usize;
            let al = lines[line - 1].split(',').nth(al_column).unwrap();
            let v = json(&[
                "predict",
                "--model",
                key["model"].as_str().unwrap(),
                "--drafter",
                group["drafter"].as_str().unwrap(),
                "--hardware",
                "b200",
                "--tp",
                &key["tp"].to_string(),
                "--ep",
                &key["ep"].to_string(),
                "--precision",
                key["precision"].as_str().unwrap(),
                "--concurrency",
                "32",
                "--al",
                &format!("1,1,{al}"),
                "--isl",
                "1024",
                "--osl",
                "1024",
            ]);
            let at_k3 = v["sweeps"][0]["predictions"].as_array().unwrap().iter().find(|p| p["k"] == 3).unwrap();
            let (predicted, by_predict) = (point["predicted"].as_f64().unwrap(), at_k3["speedup"].as_f64().unwrap());
            assert!((predicted - by_predict).abs() < 1e-9, "line {line}: calibrate {predicted}, predict {by_predict}");
            errors.push((predicted / point["measured"].as_f64().unwrap() - 1.0).abs());
        }
    }
    assert_eq!(errors.len(), s["rows"].as_u64().unwrap() as usize);
    let median = alsim::perf::calibrate::median(&errors);
    assert!((median - s["level_median_abs_rel_error"].as_f64().unwrap()).abs() < 1e-9, "{s}");

    let dir = tempfile::tempdir().unwrap();
    let mixed = dir.path().join("mixed.csv");
    let text = std::fs::read_to_string(file).unwrap().replacen(",2.44,,1.90", ",2.44,0.02,1.90", 1);
    std::fs::write(&mixed, text).unwrap();
    let (code, _, stderr) = run(&["calibrate", mixed.to_str().unwrap()]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("mixed.csv:14") && stderr.contains("none_median_tpot"), "{stderr}");
}

/// The cost per routed token per MoE layer under expert parallelism (`moe_token_us`) lowers the predicted
/// speedup of the expert-parallel deployments only — it grows with the verify tokens — and leaves the dense
/// model's and the EP-1 MoE's (gpt-oss-120b on one GPU) alone.
#[test]
fn the_ep_token_cost_lowers_the_expert_parallel_speedups_only() {
    let file = "tests/data/speedbench_level.csv";
    let speedups = |profile: &str| -> Vec<(u64, f64)> {
        let v = json(&["calibrate", file, "--score", profile]);
        let mut out = Vec::new();
        for g in v["serving"]["groups"].as_array().unwrap() {
            for p in g["points"].as_array().unwrap() {
                out.push((g["key"]["ep"].as_u64().unwrap(), p["predicted"].as_f64().unwrap()));
            }
        }
        out
    };
    let (with, without) = (speedups("profiles/hardware.csv"), speedups("tests/data/b200_without_ep_cost.csv"));
    assert_eq!(with.len(), without.len());
    assert!(with.iter().any(|(ep, _)| *ep > 1) && with.iter().any(|(ep, _)| *ep == 1));
    for ((ep, a), (_, b)) in with.iter().zip(&without) {
        if *ep == 1 {
            assert_eq!(a, b, "EP {ep}");
        } else {
            assert!(a < b, "EP {ep}: {a} with the EP token cost, {b} without");
        }
    }
}

/// A step-time file's `ep` column: rows that differ only in EP are two deployments, and the expert-parallel
/// one is priced the EP exchange of its decode tokens (a longer step at the same measured time); an EP that
/// does not divide TP is an input error naming the line.
#[test]
fn step_files_price_expert_parallelism_from_their_ep_column() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("steps.csv");
    let header = "hardware,model,tp,ep,concurrency,k,context,step_ms\n";
    let rows = "b200,dsr1,8,1,32,0,1024,20\nb200,dsr1,8,8,32,0,1024,20\n";
    std::fs::write(&file, format!("{header}{rows}")).unwrap();
    let v = json(&["calibrate", file.to_str().unwrap(), "--score", "profiles/hardware.csv"]);
    let worst = v["steps"]["worst"].as_array().unwrap();
    let predicted = |line: u64| worst.iter().find(|r| r["line"] == line).unwrap()["predicted_ms"].as_f64().unwrap();
    assert_eq!(v["steps"]["groups"].as_array().unwrap().len(), 2);
    // 32 tokens × 58 MoE layers at 1.25 µs each.
    assert!((predicted(3) - predicted(2) - 32.0 * 58.0 * 1.25e-3).abs() < 1e-6, "{worst:?}");
    std::fs::write(&file, format!("{header}b200,dsr1,8,3,32,0,1024,20\n")).unwrap();
    let (code, _, stderr) = run(&["calibrate", file.to_str().unwrap()]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("steps.csv:2") && stderr.contains("expert parallelism 3"), "{stderr}");
}

/// A chart read at a glance: labels thinned where 64 concurrencies would smear them, k = 1..8 each in its
/// own Okabe–Ito colour (k = 0 grey), the ring and the `?` explained in the legend.
#[test]
fn a_wide_sweep_chart_keeps_its_labels_apart_and_explains_its_markers() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("wide.svg");
    let (code, _, stderr) = run(&["predict", "--concurrency", "1-64", "--plot", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let svg = std::fs::read_to_string(&path).unwrap();
    let labels: Vec<&str> = svg.lines().map(str::trim).filter(|l| l.starts_with("B=")).collect();
    assert!(!labels.is_empty() && labels.len() <= 2 * 8, "at most 8 concurrencies labelled per kind: {labels:?}");
    assert!(labels.contains(&"B=64") && !labels.contains(&"B=63"), "{labels:?}");
    for okabe_ito in ["#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7"] {
        assert!(svg.contains(&format!("stroke=\"{okabe_ito}\"")), "{okabe_ito}");
    }
    assert!(svg.contains("ringed: the chosen k at concurrency B") && svg.contains("k*=3?: a toss-up"), "the legend");
    assert!(svg.contains("concurrency 1 to 64"), "the title names the panel's concurrencies");
}
