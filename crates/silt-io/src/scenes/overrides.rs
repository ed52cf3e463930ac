//! Changes to a scene's text by key before it is parsed: `silt run scene.toml --set
//! fluid.grid.cells=[64,64,64]` for a parameter study, and the scaled-down and swept versions of the
//! validation cases (`validation/<case>/reference.toml`), so that every variant is the same scene file
//! read through the same path as a user's.
//!
//! A key is a dotted path: table names, and an index into an array of tables (`particles.1.velocity`
//! is the `velocity` of the second `[[particles]]` table). The last key is set or added; the tables on
//! the way must exist, except that missing tables are created.

use super::keys::{Keys, SceneError};
use std::path::Path;

/// One change: a dotted key and its new value, or `None` to remove the key.
#[derive(Clone, Debug, PartialEq)]
pub struct Override {
    pub key: String,
    pub value: Option<toml::Value>,
}

impl Override {
    pub fn new(key: impl Into<String>, value: impl Into<toml::Value>) -> Self {
        Override {
            key: key.into(),
            value: Some(value.into()),
        }
    }

    /// Removes `key` (which must be in the scene): `--unset key`.
    pub fn remove(key: impl Into<String>) -> Self {
        Override {
            key: key.into(),
            value: None,
        }
    }

    /// Parses `key=value` as given on the command line: the value is TOML (`0.5`, `[1, 2, 3]`,
    /// `"text"`, `{ k_n = 1e5, gamma_n = 50 }`); a bare word without quotes is taken as a string
    /// (`simulation.integrator=velocity-verlet`), as the shell removes quotes.
    pub fn parse(assignment: &str) -> Result<Override, String> {
        let (key, value) = assignment.split_once('=').ok_or_else(|| {
            format!("`{assignment}` is not of the form key=value (e.g. fluid.viscosity=0.01)")
        })?;
        let key = key.trim();
        if key.is_empty() || key.split('.').any(str::is_empty) {
            return Err(format!(
                "`{assignment}`: the key must be a dotted path such as fluid.grid.cells or \
                 particles.0.velocity"
            ));
        }
        let value = value.trim();
        let parsed = toml::from_str::<toml::Table>(&format!("value = {value}"))
            .ok()
            .and_then(|mut t| t.remove("value"));
        let bare_word = !value.is_empty()
            && value
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'));
        match parsed {
            Some(value) => Ok(Override::new(key, value)),
            None if bare_word => Ok(Override::new(key, value.to_string())),
            None => Err(format!(
                "`{assignment}`: the value `{value}` is not a TOML value (numbers, [arrays], \
                 \"strings\", true/false or {{ inline = tables }})"
            )),
        }
    }
}

/// The scene text with the overrides applied in order. The text is edited in place (toml_edit), so
/// comments, layout and the line numbers in later messages stay those of the file. Errors name the
/// scene file and the key.
pub fn apply(text: &str, source: &Path, overrides: &[Override]) -> Result<String, SceneError> {
    if overrides.is_empty() {
        return Ok(text.to_string());
    }
    let keys = Keys::new(source);
    let mut document: toml_edit::DocumentMut = text.parse().map_err(|e| {
        keys.error(
            "",
            format!("cannot change keys: the scene is not valid TOML: {e}"),
        )
    })?;
    for o in overrides {
        let value: Option<toml_edit::Value> = match &o.value {
            Some(v) => Some(v.to_string().parse().map_err(|e| {
                keys.error(&o.key, format!("the new value is not a TOML value: {e}"))
            })?),
            None => None,
        };
        let parts: Vec<&str> = o.key.split('.').collect();
        set_in_table(document.as_table_mut(), "", &parts, value)
            .map_err(|message| keys.error(&o.key, message))?;
    }
    Ok(document.to_string())
}

/// Sets the dotted key `rest` below `table` (itself at `name`) to `value`, creating missing tables,
/// or removes it (`None`).
fn set_in_table(
    table: &mut dyn toml_edit::TableLike,
    name: &str,
    rest: &[&str],
    value: Option<toml_edit::Value>,
) -> Result<(), String> {
    let (key, below) = rest.split_first().ok_or("an empty key")?;
    let here = if name.is_empty() {
        key.to_string()
    } else {
        format!("{name}.{key}")
    };
    let missing = || format!("`{here}` is not in the scene, so it cannot be removed");
    match (below.is_empty(), value) {
        (true, Some(value)) => {
            table.insert(key, toml_edit::Item::Value(value));
            Ok(())
        }
        (true, None) => table.remove(key).map(|_| ()).ok_or_else(missing),
        (false, None) if !table.contains_key(key) => Err(missing()),
        (false, value) => {
            if !table.contains_key(key) {
                table.insert(key, toml_edit::Item::Table(toml_edit::Table::new()));
            }
            let item = table.get_mut(key).expect("inserted above");
            set_in_item(item, &here, below, value)
        }
    }
}

/// Sets `rest` (non-empty) below `item` (at `name`): a table, an array of tables or an array.
fn set_in_item(
    item: &mut toml_edit::Item,
    name: &str,
    rest: &[&str],
    value: Option<toml_edit::Value>,
) -> Result<(), String> {
    if let Some(table) = item.as_table_like_mut() {
        return set_in_table(table, name, rest, value);
    }
    let (index_key, below) = rest.split_first().ok_or("an empty key")?;
    let here = format!("{name}.{index_key}");
    let index = |len: usize| -> Result<usize, String> {
        let i: usize = index_key.parse().map_err(|_| {
            format!(
                "`{name}` is an array of {len}; the next key must be an index 0..{len}, not `{index_key}`"
            )
        })?;
        if i < len {
            Ok(i)
        } else {
            Err(format!(
                "`{name}` has {len} entries; index {i} is out of range"
            ))
        }
    };
    match item {
        toml_edit::Item::ArrayOfTables(tables) => {
            let i = index(tables.len())?;
            if below.is_empty() {
                return Err(format!(
                    "`{here}` is a whole [[{name}]] table; set its keys (`{here}.<key>`)"
                ));
            }
            set_in_table(tables.get_mut(i).expect("in range"), &here, below, value)
        }
        toml_edit::Item::Value(toml_edit::Value::Array(values)) => {
            let i = index(values.len())?;
            let entry = values.get_mut(i).expect("in range");
            if below.is_empty() {
                *entry = value.ok_or_else(|| {
                    format!("`{here}` is an entry of an array; set it, it cannot be removed")
                })?;
                return Ok(());
            }
            match entry {
                toml_edit::Value::InlineTable(t) => set_in_table(t, &here, below, value),
                other => Err(format!("`{here}` is a {}, not a table", other.type_name())),
            }
        }
        other => Err(format!(
            "`{name}` is a {}, not a table, so it has no key `{index_key}`",
            other.type_name()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCENE: &str = r#"
[simulation]
dt = 0.1
end_time = 1.0

[[particles]]
material = "glass"
velocity = [0.0, 0.0, -1.0]

[[particles]]
material = "steel"
"#;

    fn applied(overrides: &[&str]) -> Result<toml::Table, String> {
        let overrides: Vec<Override> = overrides
            .iter()
            .map(|s| Override::parse(s))
            .collect::<Result<_, _>>()?;
        let text = apply(SCENE, Path::new("s.toml"), &overrides).map_err(|e| e.to_string())?;
        // The file's own lines stay where they were.
        assert!(text.starts_with("\n[simulation]\n"), "{text}");
        Ok(toml::from_str(&text).unwrap())
    }

    #[test]
    fn sets_tables_array_items_and_new_keys() {
        let t = applied(&[
            "simulation.dt=0.05",
            "particles.1.velocity=[1, 0, 0]",
            "simulation.integrator=velocity-verlet",
            "fluid.grid.cells = [8, 8, 8]",
        ])
        .unwrap();
        assert_eq!(t["simulation"]["dt"].as_float(), Some(0.05));
        assert_eq!(t["simulation"]["end_time"].as_float(), Some(1.0));
        assert_eq!(
            t["simulation"]["integrator"].as_str(),
            Some("velocity-verlet")
        );
        let second = &t["particles"].as_array().unwrap()[1];
        assert_eq!(second["velocity"].as_array().unwrap().len(), 3);
        assert_eq!(second["material"].as_str(), Some("steel"));
        assert_eq!(t["fluid"]["grid"]["cells"].as_array().unwrap().len(), 3);
    }

    #[test]
    fn removes_keys() {
        let text = apply(
            SCENE,
            Path::new("s.toml"),
            &[Override::remove("simulation.end_time")],
        )
        .unwrap();
        let t: toml::Table = toml::from_str(&text).unwrap();
        assert!(t["simulation"].get("end_time").is_none());
        assert_eq!(t["simulation"]["dt"].as_float(), Some(0.1));
        for key in [
            "simulation.seed",
            "output.interval",
            "particles.0.velocity.0",
        ] {
            let e = apply(SCENE, Path::new("s.toml"), &[Override::remove(key)]).unwrap_err();
            assert!(e.to_string().contains("cannot be removed"), "{e}");
        }
    }

    #[test]
    fn bad_overrides_say_what_is_wrong() {
        let e = applied(&["particles.2.velocity=[1,0,0]"]).unwrap_err();
        assert!(e.contains("key `particles.2.velocity`"), "{e}");
        assert!(e.contains("has 2 entries"), "{e}");
        let e = applied(&["particles.first.velocity=1"]).unwrap_err();
        assert!(e.contains("must be an index"), "{e}");
        let e = applied(&["simulation.dt.value=1"]).unwrap_err();
        assert!(e.contains("`simulation.dt` is a float, not a table"), "{e}");
        assert!(Override::parse("simulation.dt").is_err());
        assert!(Override::parse("simulation..dt=1").is_err());
        assert!(Override::parse("simulation.dt=[1,").is_err());
    }
}
