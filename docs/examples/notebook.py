"""A notebook's first cell: from a capture to its parameters and a figure (docs/api.md)."""
import sys

import hilrig

result = hilrig.fit(sys.argv[1] if len(sys.argv) > 1 else "capture.h5")
print(result.to_dataframe()[["value", "ci95_lo", "ci95_hi", "note"]].to_string())
axes = result.to_dataframe("response").plot(subplots=True, figsize=(8, 6), ylabel="rad")
axes[0].figure.savefig(f"{result.capture_id}.png")
