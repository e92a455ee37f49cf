//! Sandbox timings against the real Docker daemon. Method and results: BENCHMARKS.md.
//! Run: `cargo bench --bench sandbox` (SANDALYST_IMAGE overrides the image).

use std::time::{Duration, Instant};

use sandalyst::sandbox::docker::{self, DockerSandbox};
use sandalyst::sandbox::{Sandbox, SandboxConfig};
use sandalyst::workspace::{CollectLimits, Manifest};
use tokio_util::sync::CancellationToken;

fn stats(name: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "| {name} | {} | {:.2} | {:.2} | {:.2} |",
        samples.len(),
        ms(samples[0]),
        ms(samples[samples.len() / 2]),
        ms(*samples.last().unwrap())
    );
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let engine = docker::connect().await?;
    let tag = match std::env::var("SANDALYST_IMAGE") {
        Ok(t) => t,
        Err(_) => docker::image::ensure(&engine, &|l| eprintln!("{l}")).await?,
    };
    let config = SandboxConfig {
        image: tag,
        ..SandboxConfig::default()
    };
    let c = CancellationToken::new();
    let t = Duration::from_secs(120);
    println!("| what | n | min ms | median ms | max ms |\n|---|---|---|---|---|");

    let (mut ready, mut close) = (Vec::new(), Vec::new());
    for i in 0..10 {
        let start = Instant::now();
        let sb = DockerSandbox::start(
            &engine,
            &format!("bench-{i}"),
            &config,
            &Manifest::default(),
        )
        .await?;
        sb.python("1+1", t, &c, &|_, _| {}).await?;
        ready.push(start.elapsed());
        let start = Instant::now();
        sb.close().await?;
        close.push(start.elapsed());
    }
    stats("container create + start + kernel first reply", ready);
    stats("container and volume removal", close);

    let sb = DockerSandbox::start(&engine, "bench-calls", &config, &Manifest::default()).await?;
    // The kernel imports numpy, pandas and pyplot while idle after its start; let it.
    sb.python("1+1", t, &c, &|_, _| {}).await?;
    tokio::time::sleep(Duration::from_secs(5)).await;
    let mut rt = Vec::new();
    for _ in 0..200 {
        let start = Instant::now();
        sb.python("1+1", t, &c, &|_, _| {}).await?;
        rt.push(start.elapsed());
    }
    stats("kernel call round trip (`1+1`)", rt);
    let start = Instant::now();
    sb.python(
        "import pandas, numpy, scipy.stats, matplotlib.pyplot",
        t,
        &c,
        &|_, _| {},
    )
    .await?;
    stats(
        "first import of pandas, scipy.stats, pyplot (5 s after start: all but scipy prewarmed)",
        vec![start.elapsed()],
    );
    let mut cell = Vec::new();
    for _ in 0..50 {
        let start = Instant::now();
        sb.python(
            "df = pandas.DataFrame({'a': range(1000)}); df.a.sum()",
            t,
            &c,
            &|_, _| {},
        )
        .await?;
        cell.push(start.elapsed());
    }
    stats("small pandas cell", cell);
    let mut sh = Vec::new();
    for _ in 0..20 {
        let start = Instant::now();
        sb.shell("true", t, &c, &|_, _| {}).await?;
        sh.push(start.elapsed());
    }
    stats("shell call (`true`)", sh);
    let mut streamed = Vec::new();
    for _ in 0..10 {
        let start = Instant::now();
        let first = std::sync::Mutex::new(None);
        let sink = |_: sandalyst::sandbox::Stream, _: &str| {
            first.lock().unwrap().get_or_insert_with(|| start.elapsed());
        };
        sb.python("import time\nprint('x')\ntime.sleep(0.5)", t, &c, &sink)
            .await?;
        streamed.push(first.into_inner().unwrap().unwrap_or_default());
    }
    stats(
        "first live chunk of a cell (`print`, then 0.5 s sleep)",
        streamed,
    );
    let mut figure = Vec::new();
    for _ in 0..10 {
        let start = Instant::now();
        let r = sb
            .python(
                "plt = matplotlib.pyplot\nplt.plot([1, 3, 2])\nplt.show()",
                t,
                &c,
                &|_, _| {},
            )
            .await?;
        assert_eq!(r.figures.len(), 1);
        figure.push(start.elapsed());
    }
    stats("cell with one figure (`plt.plot` + `plt.show()`)", figure);
    sb.python(
        "import os\nfor i in range(20):\n    open(f'output/f{i}.txt', 'w').write('x' * i)",
        t,
        &c,
        &|_, _| {},
    )
    .await?;
    let mut listed = Vec::new();
    for _ in 0..50 {
        let start = Instant::now();
        assert_eq!(sb.list_outputs().await?.len(), 20);
        listed.push(start.elapsed());
    }
    stats("list_outputs, 20 files (kernel idle)", listed);
    sb.python("import os\nos._exit(0)", t, &c, &|_, _| {})
        .await?;
    let mut by_exec = Vec::new();
    for _ in 0..20 {
        let start = Instant::now();
        assert_eq!(sb.list_outputs().await?.len(), 20);
        by_exec.push(start.elapsed());
    }
    stats("list_outputs, 20 files (no kernel: `find` exec)", by_exec);
    sb.python(
        "open('output/x.bin','wb').write(b'0' * (50 << 20))",
        t,
        &c,
        &|_, _| {},
    )
    .await?;
    let dir = tempfile::tempdir()?;
    let collect_start = Instant::now();
    sb.collect_outputs(dir.path(), &CollectLimits::default())
        .await?;
    stats("collect a 50 MB output", vec![collect_start.elapsed()]);
    sb.close().await?;

    let big = dir.path().join("big.bin");
    std::fs::File::create(&big)?.set_len(500 << 20)?;
    let manifest = Manifest::from_paths(&[big])?;
    let start = Instant::now();
    let sb = DockerSandbox::start(&engine, "bench-stage", &config, &manifest).await?;
    stats("start with a 500 MB input staged", vec![start.elapsed()]);
    sb.close().await?;
    Ok(())
}
