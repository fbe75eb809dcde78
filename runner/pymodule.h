/*
 * pymodule.h: the `spotrun` Python module (python/spotrun/) as this binary
 * carries it, so that any copy of spotrun (installed, or a prebuilt binary
 * that a VM's user-data fetched) gives its jobs the job side of its own
 * checkpoint protocol, whatever Python or virtual environment they run in.
 */
#ifndef SR_PYMODULE_H
#define SR_PYMODULE_H

/* The module's files as text, built in from python/spotrun/ by
 * build-aux/text-to-c (runner/pymodule-text.c, generated). */
extern const char sr_pymodule_init_py[];
extern const char sr_pymodule_torch_py[];
extern const char sr_pymodule_hf_py[];
extern const char sr_pymodule_lightning_py[];

/*
 * Write the module into DIR/spotrun/ (DIR made if missing), so that DIR on
 * PYTHONPATH makes `import spotrun` work. A file already holding the same
 * bytes is left alone; another is replaced atomically (a job of another run
 * importing it meanwhile sees the old file or the new one, never a part).
 * Returns 0, or -1 with err filled ("write module spotrun into DIR: ...").
 */
int sr_pymodule_place(const char *dir, char *err);

#endif
