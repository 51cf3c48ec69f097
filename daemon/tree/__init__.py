"""The workspace as a whole: listing it by the ignore rules, taking it (each file's
sha256 by stat cache or by reading it, contents stored for a checkpoint), and
comparing a checkpoint's manifest with it."""
