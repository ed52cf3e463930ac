//! Reading the checkpoints of fluid, coupled and rod runs: the file, its kind, its format and the scene it was
//! written for are checked in one place, each mistake a message naming the file.

use crate::simulation::fingerprint;
use serde::de::DeserializeOwned;
use std::path::Path;

/// The checkpoint at `path` of a run of `kind` ("fluid", "coupled"), whose `header` gives (format, kind
/// tag, scene fingerprint): refused unless its kind tag is `tag`, its format `format` and its scene
/// `scene_text`.
pub(crate) fn read_checkpoint<T: DeserializeOwned>(
    path: &Path,
    (kind, tag, format): (&str, &str, u32),
    scene_text: &str,
    header: impl Fn(&T) -> (u32, String, u64),
) -> Result<T, String> {
    let bytes = std::fs::read(path).map_err(|e| {
        format!(
            "{}: cannot read the checkpoint ({e}); run without --resume first",
            path.display()
        )
    })?;
    let not_ours = |detail: String| {
        format!(
            "{}: not a Silt {kind} checkpoint ({detail})",
            path.display()
        )
    };
    let file: T = bincode::deserialize(&bytes).map_err(|e| not_ours(e.to_string()))?;
    let (file_format, file_tag, scene) = header(&file);
    if file_tag != tag {
        return Err(not_ours(format!("kind {file_tag:?}")));
    }
    if file_format != format {
        return Err(format!(
            "{}: checkpoint format {file_format} is not supported",
            path.display()
        ));
    }
    if scene != fingerprint(scene_text) {
        return Err(format!(
            "{}: the checkpoint was written for a different scene file; resume with the same scene",
            path.display()
        ));
    }
    Ok(file)
}
