//! Files of a running sandbox against the real daemon: outputs listed, files read,
//! inputs added and removed (and read-only), a workspace restored in a new container.

use crate::common;

use std::time::Duration;

use sandalyst::sandbox::{ExecStatus, Sandbox};
use sandalyst::workspace::Manifest;
use tokio_util::sync::CancellationToken;

const T: Duration = Duration::from_secs(60);

/// A cell's result, whatever its status.
async fn cell(sb: &impl Sandbox, code: &str) -> sandalyst::sandbox::ExecResult {
    sb.python(code, T, &CancellationToken::new(), &|_, _| {})
        .await
        .unwrap()
}

/// A cell that must succeed.
async fn py(sb: &impl Sandbox, code: &str) -> sandalyst::sandbox::ExecResult {
    let r = cell(sb, code).await;
    assert_eq!(r.status, ExecStatus::Ok, "{r:?}");
    r
}

#[tokio::test]
async fn list_outputs_sees_new_and_changed_files_with_or_without_a_kernel() {
    let Some(docker) = common::engine_or_skip().await else {
        return;
    };
    let (sb, _) = common::sandbox(&docker, "list", &[]).await;
    assert_eq!(sb.list_outputs().await.unwrap(), vec![]);
    py(
        &sb,
        "import os\nos.makedirs('output/sub', exist_ok=True)\nopen('output/a.txt', 'w').write('hello')\nopen('output/sub/b.csv', 'w').write('x\\n1\\n')\nos.symlink('/etc/passwd', 'output/link')\nopen('not-an-output.txt', 'w').write('no')",
    )
    .await;
    let first = sb.list_outputs().await.unwrap();
    let names: Vec<_> = first.iter().map(|e| (e.path.as_str(), e.bytes)).collect();
    assert_eq!(names, [("a.txt", 5), ("sub/b.csv", 4)]);
    assert!(first[0].modified_ns > 1_600_000_000 * 1_000_000_000);

    // The append comes once the file system's clock has moved past the first write
    // (its timestamps are as coarse as the kernel's tick), however long that takes.
    py(
        &sb,
        "import os, time\nm = os.stat('output/a.txt').st_mtime_ns\nwhile True:\n    open('/tmp/tick', 'w').close()\n    if os.stat('/tmp/tick').st_mtime_ns > m:\n        break\n    time.sleep(0.001)\nopen('output/a.txt', 'a').write('!')",
    )
    .await;
    let second = sb.list_outputs().await.unwrap();
    assert_eq!(second[0].bytes, 6);
    assert!(second[0].modified_ns > first[0].modified_ns);
    assert_eq!(second[1], first[1], "unchanged");

    // With the kernel dead (its restart is lazy), the listing comes from an exec.
    let r = cell(&sb, "import os\nos._exit(1)").await;
    assert_eq!(r.status, ExecStatus::KernelRestarted);
    let third = sb.list_outputs().await.unwrap();
    assert_eq!(third, second);
    sb.close().await.unwrap();
}

#[tokio::test]
async fn read_file_returns_one_regular_file_within_the_limit() {
    let Some(docker) = common::engine_or_skip().await else {
        return;
    };
    let (sb, _) = common::sandbox(&docker, "read", &[]).await;
    py(
        &sb,
        "import os\nos.makedirs('output/d', exist_ok=True)\nopen('output/d/r.md', 'w').write('# report')\nopen('output/big.bin', 'wb').write(b'0' * 100_000)\nos.symlink('/etc/passwd', 'output/link')\nos.mkfifo('output/fifo')",
    )
    .await;
    assert_eq!(
        sb.read_file("output/d/r.md", 100).await.unwrap(),
        b"# report"
    );
    assert_eq!(
        sb.read_file("./output/big.bin", 100_000)
            .await
            .unwrap()
            .len(),
        100_000
    );
    let cases = [
        ("output/big.bin", 99_999, "larger than"),
        ("output/d", 1 << 20, "not a regular file"),
        ("output/link", 1 << 20, "not a regular file"),
        ("output/fifo", 1 << 20, "not a regular file"),
        ("output/missing.txt", 1 << 20, "no such file"),
        ("/etc/passwd", 1 << 20, "refused"),
        ("output/../../etc/passwd", 1 << 20, "refused"),
        ("", 1 << 20, "refused"),
    ];
    for (rel, max, why) in cases {
        let err = sb.read_file(rel, max).await.unwrap_err().to_string();
        assert!(err.contains(why), "{rel}: {err}");
    }
    sb.close().await.unwrap();
}

#[tokio::test]
async fn inputs_are_read_only_and_can_be_added_and_removed_while_running() {
    let Some(docker) = common::engine_or_skip().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("first.csv");
    std::fs::write(&first, "a\n1\n").unwrap();
    let (sb, _) = common::sandbox(&docker, "inputs", std::slice::from_ref(&first)).await;
    let code = "import os\n\
        for what, f in [('write', lambda: open('input/first.csv', 'a').write('x')),\n\
        \x20               ('create', lambda: open('input/new.csv', 'w').write('x')),\n\
        \x20               ('remove', lambda: os.remove('input/first.csv')),\n\
        \x20               ('chmod', lambda: os.chmod('input/first.csv', 0o666)),\n\
        \x20               ('chmod dir', lambda: os.chmod('input', 0o777))]:\n\
        \x20   try:\n\
        \x20       f(); print('ALLOWED', what)\n\
        \x20   except OSError as e:\n\
        \x20       print('denied', what)\n\
        print(open('input/first.csv').read(), end='')\n\
        print(oct(os.stat('input/first.csv').st_mode & 0o777), oct(os.stat('input').st_mode & 0o777))";
    let r = py(&sb, code).await;
    assert!(!r.stdout.contains("ALLOWED"), "{}", r.stdout);
    assert_eq!(r.stdout.matches("denied").count(), 5, "{}", r.stdout);
    assert!(r.stdout.ends_with("a\n1\n0o444 0o555\n"), "{}", r.stdout);

    // Added while the kernel runs: a file and a folder; read-only as well.
    let more = dir.path().join("more");
    std::fs::create_dir_all(more.join("sub")).unwrap();
    std::fs::write(more.join("sub/m.txt"), "m").unwrap();
    let second = dir.path().join("second.json");
    std::fs::write(&second, "{}").unwrap();
    sb.add_inputs(&Manifest::from_paths(&[second, more]).unwrap())
        .await
        .unwrap();
    let r = py(
        &sb,
        "import os\nprint(sorted(os.listdir('input')), open('input/more/sub/m.txt').read())\nprint(oct(os.stat('input/second.json').st_mode & 0o777), oct(os.stat('input/more/sub').st_mode & 0o777), os.access('input', os.W_OK))",
    )
    .await;
    assert_eq!(
        r.stdout, "['first.csv', 'more', 'second.json'] m\n0o444 0o555 False\n",
        "{r:?}"
    );
    // The outputs folder is untouched by an addition.
    py(&sb, "open('output/keep.txt', 'w').write('k')").await;
    sb.add_inputs(&Manifest::from_paths(std::slice::from_ref(&first)).unwrap())
        .await
        .unwrap();
    assert_eq!(sb.list_outputs().await.unwrap().len(), 1);

    sb.remove_input("first.csv").await.unwrap();
    sb.remove_input("more").await.unwrap();
    let r = py(
        &sb,
        "import os\nprint(sorted(os.listdir('input')), os.access('input', os.W_OK))",
    )
    .await;
    assert_eq!(r.stdout, "['second.json'] False\n", "{r:?}");
    let err = sb.remove_input("first.csv").await.unwrap_err().to_string();
    assert!(err.contains("no such input"), "{err}");
    let err = sb
        .remove_input("../output/keep.txt")
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("refused"), "{err}");
    sb.close().await.unwrap();
}

#[tokio::test]
async fn a_workspace_archive_restores_into_a_new_container() {
    let Some(docker) = common::engine_or_skip().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("data.csv");
    std::fs::write(&input, "a\n1\n").unwrap();
    let (old, _) = common::sandbox(&docker, "archive", std::slice::from_ref(&input)).await;
    py(
        &old,
        "import os\nos.makedirs('output/charts', exist_ok=True)\nopen('output/charts/c.png', 'wb').write(b'png')\nopen('notes.txt', 'w').write('scratch')",
    )
    .await;
    let archive = dir.path().join("ws.tar");
    old.archive_workspace(&archive, 1 << 30).await.unwrap();
    old.close().await.unwrap();

    let (new, _) = common::sandbox(&docker, "restore", &[]).await;
    new.restore_workspace(&archive).await.unwrap();
    let r = py(
        &new,
        "import os\nprint(open('input/data.csv').read(), end='')\nprint(open('notes.txt').read())\nprint(oct(os.stat('input/data.csv').st_mode & 0o777), os.access('input', os.W_OK))\nn = open('output/after.txt', 'w').write('writable')",
    )
    .await;
    assert_eq!(r.stdout, "a\n1\nscratch\n0o444 False\n", "{r:?}");
    let outputs: Vec<_> = new
        .list_outputs()
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.path)
        .collect();
    assert_eq!(outputs, ["after.txt", "charts/c.png"]);
    assert_eq!(
        new.read_file("output/charts/c.png", 10).await.unwrap(),
        b"png"
    );
    sb_missing_archive(&new, dir.path()).await;
    new.close().await.unwrap();
}

async fn sb_missing_archive(sb: &impl Sandbox, dir: &std::path::Path) {
    let err = sb
        .restore_workspace(&dir.join("nope.tar"))
        .await
        .unwrap_err();
    assert!(format!("{err:#}").contains("nope.tar"), "{err:#}");
}

#[tokio::test]
async fn the_inputs_profile_for_a_model_names_columns_and_rows_and_leaves_the_kernel_clean() {
    let Some(docker) = common::engine_or_skip().await else {
        return;
    };
    let csv = common::repo_root().join("examples/building_energy.csv");
    let dir = tempfile::tempdir().unwrap();
    // A semicolon file with decimal commas in Latin-1: loaded as it was read.
    let euro = dir.path().join("lecturas.csv");
    std::fs::write(
        &euro,
        b"fecha;consumo;temp\xe9rature\n2024-01-01 00:00;1,5;3,2\n2024-01-01 01:00;2,5;3,1\n2024-01-01 02:00;3,5;2,9\n",
    )
    .unwrap();
    let (sb, _) = common::sandbox(&docker, "profile", &[csv, euro]).await;
    py(&sb, "x = 1").await;
    let r = py(&sb, &sandalyst::analyst::input_profile_code()).await;
    let profile = sandalyst::analyst::input_profile(&r.stdout);
    let text = &profile.text;
    assert!(text.contains("building_energy.csv"), "{text}");
    assert!(text.contains("rows: 1344, columns: 3"), "{text}");
    assert!(text.contains("energy_kwh"), "{text}");
    assert!(
        text.contains(
            "first rows (CSV):\ntimestamp,energy_kwh,outdoor_temp_c\n2024-05-06 00:00:00,45.93,8.8"
        ),
        "{text}"
    );
    assert!(text.contains("median interval 1 h"), "{text}");
    // The planner's JSON line is not for the model.
    assert!(!text.contains("SANDALYST_PROFILE"), "{text}");
    // Nothing it defined stays: the cell after it sees only the model's own names.
    assert_eq!(r.names.as_deref(), Some("x (int)"));
    let after = py(&sb, "y = [1, 2]").await;
    assert_eq!(after.names.as_deref(), Some("x (int), y (list of 2)"));
    // The load cell reads each table as the profile did: time columns as datetimes,
    // the semicolon file with its decimal commas and its encoding.
    let cell = profile.load_cell.expect("a load cell");
    let loaded = py(&sb, &cell).await;
    assert_eq!(loaded.status, ExecStatus::Ok, "{cell}\n{loaded:?}");
    let check = py(
        &sb,
        "print(df_building_energy['timestamp'].dtype, df_building_energy.shape, \
         df_lecturas['consumo'].sum(), list(df_lecturas.columns), df_lecturas['fecha'].dtype, \
         pd.__name__, np.__name__, plt.__name__)",
    )
    .await;
    assert_eq!(
        check.stdout.trim(),
        "datetime64[ns] (1344, 3) 7.5 ['fecha', 'consumo', 'temp\u{e9}rature'] datetime64[ns] pandas numpy matplotlib.pyplot",
        "{cell}\n{check:?}"
    );
}

#[tokio::test]
async fn line_breaks_in_quoted_strings_are_mended_and_said() {
    let Some(docker) = common::engine_or_skip().await else {
        return;
    };
    let (sb, _) = common::sandbox(&docker, "requote", &[]).await;
    // A small model's report: JSON's \n became real newlines inside '...'.
    let r = py(
        &sb,
        "n = open('output/report.md', 'w').write('## Data\n1344 rows, it\\'s hourly.\n## Method\nz-scores')\nprint(n, \"a\nb\")",
    )
    .await;
    assert_eq!(r.stdout, "50 a\nb\n", "{r:?}");
    let note = r.note.unwrap();
    assert!(note.contains("held real line breaks"), "{note}");
    let md = sb.read_file("output/report.md", 1000).await.unwrap();
    assert_eq!(
        String::from_utf8(md).unwrap(),
        "## Data\n1344 rows, it's hourly.\n## Method\nz-scores"
    );
    // Strings with line breaks and statements on one line, together.
    py(&sb, "open('output/two.md', 'w').write('## Data\n') open('output/two.md', 'a').write('1344 rows.\nhourly\n')").await;
    let md = sb.read_file("output/two.md", 1000).await.unwrap();
    assert_eq!(
        String::from_utf8(md).unwrap(),
        "## Data\n1344 rows.\nhourly\n"
    );
    // A reply cut before the string's closing quote: closed at the end, with its bracket.
    py(
        &sb,
        "open('output/cut.md', 'w').write('## Data\n1344 rows\n",
    )
    .await;
    let md = sb.read_file("output/cut.md", 1000).await.unwrap();
    assert_eq!(String::from_utf8(md).unwrap(), "## Data\n1344 rows");
    // A syntax error of another kind is left as it is.
    let bad = sb
        .python(
            "x = (1,\ny = 'a\nb'",
            Duration::from_secs(30),
            &CancellationToken::new(),
            &|_, _| {},
        )
        .await
        .unwrap();
    assert_eq!(bad.status, ExecStatus::Error);
    assert_eq!(bad.note, None);
}

#[tokio::test]
async fn a_cell_that_fails_leaves_the_dataframes_as_they_were() {
    let Some(docker) = common::engine_or_skip().await else {
        return;
    };
    let (sb, _) = common::sandbox(&docker, "undo", &[]).await;
    py(
        &sb,
        "import pandas as pd\ndf = pd.DataFrame({'x': [1, 2]})\ns = df['x']",
    )
    .await;
    // A small model's cell that changes df, then fails: run twice, it must not double.
    for _ in 0..2 {
        let failed = cell(
            &sb,
            "df['x'] = df['x'] * 2\ndf['y'] = 1\ns = None\nraise ValueError('boom')",
        )
        .await;
        assert_eq!(failed.status, ExecStatus::Error);
        let note = failed.note.unwrap_or_default();
        assert!(
            note.contains("The cell failed, so df, s are as before it"),
            "{note}"
        );
    }
    let r = py(&sb, "print(df['x'].tolist(), list(df.columns), s.tolist())").await;
    assert_eq!(r.stdout, "[1, 2] ['x'] [1, 2]\n");
    // A column that no frame has: the note names the frames' columns.
    let guessed = cell(&sb, "print(df['count'].sum())").await;
    assert_eq!(
        guessed.note.as_deref(),
        Some("'count' is not a column of any DataFrame: df has x.")
    );
    // A variable of its own read as a column: the note says how to use it.
    let read_as_column = cell(&sb, "print(df['s'].sum())").await;
    assert_eq!(
        read_as_column.note.as_deref(),
        Some("'s' is not a column of any DataFrame: df has x. s is a variable (Series), not a column: use s itself, or add it first with this line: `df['s'] = s`.")
    );
    // A part of a time taken for a column: the line that makes it.
    py(
        &sb,
        "t = pd.DataFrame({'ts': pd.to_datetime(['2024-05-06 01:00'])})",
    )
    .await;
    let time_part = cell(&sb, "t.groupby('hour_of_week').size()").await;
    let note = time_part.note.unwrap_or_default();
    assert!(
        note.ends_with("It can be made from the time column with this line: `t['hour_of_week'] = t['ts'].dt.dayofweek * 24 + t['ts'].dt.hour`."),
        "{note}"
    );
    // A number where a table should be: what it is, not only its type's name.
    let scalar = cell(&sb, "TABLE = df['x'].sum()\nTABLE.to_csv('output/a.csv')").await;
    assert_eq!(
        scalar.note.as_deref(),
        Some("TABLE is a single number (3), not a table: .to_csv writes the rows of a DataFrame. Make it the rows the file is for (a filter such as df[df[col] > limit], or a groupby with .reset_index()); a single value belongs in the report's text.")
    );
    // A cell that succeeds keeps its changes.
    py(&sb, "df['x'] = df['x'] * 10").await;
    let r = py(&sb, "print(df['x'].tolist())").await;
    assert_eq!(r.stdout, "[10, 20]\n");
}

#[tokio::test]
async fn a_one_line_cell_of_several_statements_runs_split_and_says_so() {
    let Some(docker) = common::engine_or_skip().await else {
        return;
    };
    let (sb, _) = common::sandbox(&docker, "mend", &[]).await;
    // A small model's JSON without newline escapes.
    let r = py(&sb, "import math x = math.sqrt(16) print(int(x))").await;
    assert_eq!(r.stdout, "4\n");
    let note = r.note.unwrap();
    assert!(note.contains("one line holding 3 statements"), "{note}");
    // A real syntax error stays one.
    let bad = cell(&sb, "x = = 1").await;
    assert_eq!(bad.status, ExecStatus::Error);
    assert!(bad.traceback.unwrap().contains("SyntaxError"));
    assert_eq!(bad.note, None);
}
