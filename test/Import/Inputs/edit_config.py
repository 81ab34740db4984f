"""edit_config.py SRC DST JSON: copies checkpoint folder SRC to DST with the
top-level keys of JSON replacing config.json's (for refusal tests)."""
import json
import shutil
import sys
from pathlib import Path

src, dst, patch = Path(sys.argv[1]), Path(sys.argv[2]), json.loads(sys.argv[3])
shutil.rmtree(dst, ignore_errors=True)
shutil.copytree(src, dst)
config = json.loads((dst / "config.json").read_text())
config.update(patch)
(dst / "config.json").write_text(json.dumps(config, indent=2))
