//! The JSON writer every document of llmgw goes through: serde_json with a
//! formatter that indents as `serde_json::to_writer_pretty` does, cheaper.

use std::io::Write as _;

use serde::Serialize;

/// Writes `value` as it would appear nested `depth` levels deep in a
/// document `write_json` writes: the same bytes, for writers that lay
/// out the rest of a document themselves.
pub fn write_json_at<W: std::io::Write, T: Serialize>(out: &mut W, value: &T, depth: usize) -> std::io::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(out, pretty::Pretty::at(depth));
    value
        .serialize(&mut ser)
        .map_err(|e| std::io::Error::new(e.io_error_kind().unwrap_or(std::io::ErrorKind::Other), e))
}

/// Writes a JSON document followed by a newline.
pub fn write_json<W: std::io::Write, T: Serialize>(out: W, value: &T) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::with_capacity(1 << 16, out);
    let mut ser = serde_json::Serializer::with_formatter(&mut out, pretty::Pretty::default());
    // Keep the kind of an I/O error (a closed pipe is not a failure).
    value
        .serialize(&mut ser)
        .map_err(|e| std::io::Error::new(e.io_error_kind().unwrap_or(std::io::ErrorKind::Other), e))?;
    out.write_all(b"\n")?;
    out.flush()
}

mod pretty {
    //! serde_json's pretty printing, byte for byte, with each line break
    //! and its indentation written at once. A plan that leaves replicas
    //! unplaced lists hundreds of thousands of node ids, six levels deep:
    //! the stock formatter writes each level's two spaces on their own,
    //! which cost more than the ids.

    use std::io::{self, Write};

    /// ",\n" and then enough spaces for any depth a document of llmgw reaches.
    const BREAK: &[u8] = b",\n                                                                ";

    #[derive(Default)]
    pub struct Pretty {
        depth: usize,
        has_value: bool,
    }

    impl Pretty {
        /// As the formatter is `depth` levels into a document.
        pub fn at(depth: usize) -> Pretty {
            Pretty { depth, has_value: false }
        }

        /// A line break (after a comma unless `first`) and the indentation.
        fn line<W: ?Sized + Write>(&self, w: &mut W, first: bool) -> io::Result<()> {
            let spaces = 2 * self.depth;
            let start = usize::from(first);
            if spaces + 2 <= BREAK.len() {
                return w.write_all(&BREAK[start..spaces + 2]);
            }
            w.write_all(&BREAK[start..2])?;
            (0..self.depth).try_for_each(|_| w.write_all(b"  "))
        }
    }

    impl serde_json::ser::Formatter for Pretty {
        fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
            self.depth += 1;
            self.has_value = false;
            w.write_all(b"[")
        }
        fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
            self.depth -= 1;
            if self.has_value {
                self.line(w, true)?;
            }
            w.write_all(b"]")
        }
        fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
            self.line(w, first)
        }
        fn end_array_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
            self.has_value = true;
            Ok(())
        }
        fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
            self.depth += 1;
            self.has_value = false;
            w.write_all(b"{")
        }
        fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
            self.depth -= 1;
            if self.has_value {
                self.line(w, true)?;
            }
            w.write_all(b"}")
        }
        fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
            self.line(w, first)
        }
        fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
            w.write_all(b": ")
        }
        fn end_object_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
            self.has_value = true;
            Ok(())
        }
    }

    #[cfg(test)]
    mod tests {
        use serde_json::json;

        /// Byte for byte what serde_json's own pretty printer writes, deep
        /// nesting (past the spaces kept ready) and empty containers included.
        #[test]
        fn the_same_bytes_as_serde_json_pretty() {
            let mut deep = json!({"leaf": [1, "two", null, {}, []]});
            for i in 0..40 {
                deep = json!({"level": i, "inner": [deep, {"k": "v\n\"q\""}], "empty": {}, "list": []});
            }
            for value in [deep, json!([]), json!({}), json!("s"), json!(1.5), json!([[[]]])] {
                let mut ours = Vec::new();
                crate::json::write_json(&mut ours, &value).unwrap();
                let theirs = serde_json::to_string_pretty(&value).unwrap() + "\n";
                assert_eq!(String::from_utf8(ours).unwrap(), theirs);
            }
        }
    }
}
