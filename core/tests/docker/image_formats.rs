//! The default image against the real daemon: the file formats analysts drop (Excel,
//! OpenDocument, Parquet) staged as inputs and read with pandas, a seaborn chart with
//! a CJK label, and the package list the model is told about.

use crate::common;

use std::path::PathBuf;
use std::time::Duration;

use sandalyst::sandbox::packages;
use sandalyst::sandbox::{ExecResult, ExecStatus, Sandbox};
use sandalyst::workspace::CollectLimits;
use tokio_util::sync::CancellationToken;

const T: Duration = Duration::from_secs(120);

async fn py(sb: &impl Sandbox, code: &str) -> ExecResult {
    let r = sb
        .python(code, T, &CancellationToken::new(), &|_, _| {})
        .await
        .unwrap();
    assert_eq!(r.status, ExecStatus::Ok, "{code}\n{r:?}");
    r
}

/// Writes the three workbooks with the writers' own APIs (openpyxl, odfpy, pyarrow),
/// not pandas, so the reads below check pandas against files it did not make.
const WRITE: &str = r#"
import datetime, os
os.makedirs("output", exist_ok=True)
rows = [("Oslo", 1.5, 3, datetime.date(2024, 1, 31)),
        ("北京", 2.25, -4, datetime.date(2024, 2, 29)),
        ("São Paulo", 1e6, 0, datetime.date(2024, 12, 1))]

import openpyxl
wb = openpyxl.Workbook(); ws = wb.active; ws.title = "energy"
ws.append(["site", "kwh", "delta", "day"])
for r in rows:
    ws.append(list(r))
wb.save("output/energy.xlsx")

from odf.opendocument import OpenDocumentSpreadsheet
from odf.table import Table, TableRow, TableCell
from odf.text import P
doc = OpenDocumentSpreadsheet(); t = Table(name="energy")
def cell(v):
    if isinstance(v, str):
        c = TableCell(valuetype="string"); c.addElement(P(text=v))
    elif isinstance(v, datetime.date):
        c = TableCell(valuetype="date", datevalue=v.isoformat()); c.addElement(P(text=v.isoformat()))
    else:
        c = TableCell(valuetype="float", value=v); c.addElement(P(text=str(v)))
    return c
for r in [("site", "kwh", "delta", "day")] + rows:
    tr = TableRow()
    for v in r:
        tr.addElement(cell(v))
    t.addElement(tr)
doc.spreadsheet.addElement(t); doc.save("output/energy.ods")

import pyarrow as pa, pyarrow.parquet as pq
pq.write_table(pa.table({"site": [r[0] for r in rows], "kwh": [r[1] for r in rows],
                         "delta": pa.array([r[2] for r in rows], pa.int64()),
                         "day": pa.array([r[3] for r in rows], pa.date32())}),
               "output/energy.parquet")
print(sorted(os.listdir("output")))
"#;

/// Reads each staged input with pandas and prints one checked line per file.
const READ: &str = r#"
import pandas as pd
frames = {"xlsx": pd.read_excel("input/energy.xlsx", sheet_name="energy"),
          "ods": pd.read_excel("input/energy.ods", sheet_name="energy"),
          "parquet": pd.read_parquet("input/energy.parquet")}
for kind, df in frames.items():
    assert list(df.columns) == ["site", "kwh", "delta", "day"], (kind, df.columns)
    assert df["site"].tolist() == ["Oslo", "北京", "São Paulo"], (kind, df["site"])
    assert df["kwh"].tolist() == [1.5, 2.25, 1e6], (kind, df["kwh"])
    assert df["delta"].tolist() == [3, -4, 0], (kind, df["delta"])
    days = pd.to_datetime(df["day"]).dt.strftime("%Y-%m-%d").tolist()
    assert days == ["2024-01-31", "2024-02-29", "2024-12-01"], (kind, days)
    print(kind, len(df), float(df["kwh"].sum()), int(df["delta"].sum()))
"#;

/// A seaborn chart whose title and tick labels need a CJK font.
/// scikit-learn and statsmodels are imported too: joblib warns on import where it
/// cannot make semaphores (a read-only or missing /dev/shm).
const CHART: &str = r#"
import matplotlib.pyplot as plt, seaborn as sns, pandas as pd
import sklearn.linear_model, statsmodels.api
df = pd.DataFrame({"建筑": ["北楼", "南楼", "East"], "能耗": [12.5, 9.0, 14.25]})
ax = sns.barplot(data=df, x="建筑", y="能耗")
ax.set_title("每日能耗 (kWh)")
plt.savefig("output/能耗.png", dpi=80)
plt.close("all")
import os
print(os.path.getsize("output/能耗.png"))
"#;

#[tokio::test(flavor = "multi_thread")]
async fn excel_ods_and_parquet_inputs_read_with_pandas_and_cjk_charts_render() {
    let Some(docker) = common::engine_or_skip().await else {
        return;
    };

    // 1. Make the three files in one sandbox and bring them out as a run would.
    let (maker, _) = common::sandbox(&docker, "formats-make", &[]).await;
    let r = py(&maker, WRITE).await;
    assert_eq!(
        r.stdout.trim(),
        "['energy.ods', 'energy.parquet', 'energy.xlsx']",
        "{r:?}"
    );
    assert_eq!(r.stderr, "", "{r:?}");
    let made = tempfile::tempdir().unwrap();
    let got = maker
        .collect_outputs(made.path(), &CollectLimits::default())
        .await
        .unwrap();
    maker.close().await.unwrap();
    assert_eq!(got.files.len(), 3, "{got:?}");
    let inputs: Vec<PathBuf> = ["energy.xlsx", "energy.ods", "energy.parquet"]
        .iter()
        .map(|n| made.path().join(n))
        .collect();
    // Each is its real format, not text: a zip (xlsx, ods) or Parquet's magic.
    for (path, magic) in inputs.iter().zip([&b"PK"[..], b"PK", b"PAR1"]) {
        let bytes = std::fs::read(path).unwrap();
        assert!(bytes.starts_with(magic), "{}", path.display());
    }

    // 2. Stage them as the user's inputs in a fresh sandbox and read them with pandas.
    let (sb, _) = common::sandbox(&docker, "formats-read", &inputs).await;
    let r = py(&sb, READ).await;
    assert_eq!(
        r.stdout.lines().collect::<Vec<_>>(),
        [
            "xlsx 3 1000003.75 -1",
            "ods 3 1000003.75 -1",
            "parquet 3 1000003.75 -1"
        ],
        "{r:?}"
    );
    assert_eq!(r.stderr, "", "{r:?}");

    // 3. A seaborn chart with CJK text: no "Glyph ... missing from font(s)" warning
    // (nothing at all on stderr), and a real PNG in output/.
    let r = py(&sb, CHART).await;
    assert_eq!(r.stderr, "", "{r:?}");
    let out = tempfile::tempdir().unwrap();
    let got = sb
        .collect_outputs(out.path(), &CollectLimits::default())
        .await
        .unwrap();
    let png = out.path().join("能耗.png");
    assert!(got.files.iter().any(|f| f.path == "能耗.png"), "{got:?}");
    let img = image::open(&png).unwrap();
    assert!(img.width() > 300 && img.height() > 200);
    // The CJK glyphs were drawn with the CJK font: matplotlib resolves the fallback
    // chain for these characters to WenQuanYi Micro Hei.
    let r = py(
        &sb,
        "from matplotlib import font_manager as fm\nimport matplotlib as mpl\n\
         fonts = fm.fontManager._find_fonts_by_props(fm.FontProperties(family=mpl.rcParams['font.family']))\n\
         print([fm.get_font(f).family_name for f in fonts][:2])",
    )
    .await;
    assert_eq!(
        r.stdout.trim(),
        "['DejaVu Sans', 'WenQuanYi Micro Hei']",
        "{r:?}"
    );
    sb.close().await.unwrap();
}

/// The package list comes from the image and names what the issue promises, at the
/// versions the recipe pins; a second sandbox of the same image reads the cache.
#[tokio::test(flavor = "multi_thread")]
async fn the_image_lists_its_python_packages() {
    let Some(docker) = common::engine_or_skip().await else {
        return;
    };
    let (sb, _) = common::sandbox(&docker, "packages", &[]).await;
    let env = sb.python_env().await.unwrap();
    sb.close().await.unwrap();
    let major_minor = |v: &str| -> (u32, u32) {
        let mut it = v.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
        (it.next().unwrap_or(0), it.next().unwrap_or(0))
    };
    assert!(major_minor(&env.python) >= (3, 12), "{env:?}");
    let at_least = [
        ("pandas", (2, 2)),
        ("numpy", (2, 0)),
        ("scipy", (1, 10)),
        ("matplotlib", (3, 8)),
        ("seaborn", (0, 13)),
        ("statsmodels", (0, 14)),
        ("scikit-learn", (1, 2)),
        ("pyarrow", (14, 0)),
        ("openpyxl", (3, 0)),
        ("xlrd", (2, 0)),
        ("odfpy", (1, 4)),
        ("tabulate", (0, 8)),
        ("ipython", (8, 0)),
    ];
    for (name, min) in at_least {
        let v = env
            .version_of(name)
            .unwrap_or_else(|| panic!("{name} is not in the image: {env:?}"));
        assert!(major_minor(v) >= min, "{name} {v} is older than {min:?}");
    }
    let said = packages::describe(&env);
    eprintln!("{} characters: {said}", said.len());
    assert!(
        said.starts_with(&format!("Python {} with numpy ", env.python)),
        "{said}"
    );
    // The analysis libraries by name, the file formats by what pandas does with them.
    assert!(
        said.contains(" and IPython ")
            && said.contains(
                "; pandas reads and writes Parquet, Excel .xlsx, .xls and OpenDocument .ods files"
            )
            && !said.contains("odfpy"),
        "{said}"
    );

    // What `sandalyst image status` shows is the same list (from the cache the
    // sandbox wrote, keyed by the image id).
    let tag = common::image_tag(&docker).await;
    assert_eq!(
        sandalyst::sandbox::docker::packages::for_image(&docker, &tag)
            .await
            .unwrap(),
        env
    );
}
