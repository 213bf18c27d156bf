/* The words of the trace-line grammar (trace_line.hpp), shared by its two writers: the C preload
 * tracer (nvfresh_trace.c) and the C++ reader and writer (trace_line.cpp). Plain C: the tracer
 * links nothing of nvfresh. A change here is a change of the grammar's version. */
#ifndef NVFRESH_TRACE_FORMAT_H
#define NVFRESH_TRACE_FORMAT_H

#define NVFRESH_TRACE_PROCESS 'X'   /* a process started */
#define NVFRESH_TRACE_INVOKED 'I'   /* the path its execve named, after its X line */
#define NVFRESH_TRACE_TIMES 'T'     /* when the latest process of a pid ran */
#define NVFRESH_TRACE_READ 'R'      /* opened read-only, or stat found a non-directory */
#define NVFRESH_TRACE_DIRECTORY 'D' /* a directory opened or stat'ed */
#define NVFRESH_TRACE_WRITE 'W'     /* opened for writing, created or truncated */
#define NVFRESH_TRACE_MISSING 'M'   /* a lookup that found nothing (ENOENT, ENOTDIR) */
#define NVFRESH_TRACE_LOST 'L'      /* events that could not be delivered */

#define NVFRESH_TRACE_NO_PASS "-"     /* the pass of a process whose argv names none */
#define NVFRESH_TRACE_SERVED "served" /* a T line's mark of a step the step cache served */

/* The reasons of L lines. */
#define NVFRESH_TRACE_LOST_PATH "path-too-long-or-newline"
#define NVFRESH_TRACE_LOST_UNRESOLVABLE "unresolvable-path"
#define NVFRESH_TRACE_LOST_EVENTS_PREFIX "lost-" /* "lost-<n>-events" */
#define NVFRESH_TRACE_LOST_EVENTS_SUFFIX "-events"

#endif
