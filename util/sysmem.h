/* util/sysmem.h: how much memory this process may still take, read from the system. */
#ifndef MT_UTIL_SYSMEM_H
#define MT_UTIL_SYSMEM_H

/* The bytes this process can still allocate: the least of the kernel's MemAvailable
 * (/proc/meminfo), the address-space limit (ulimit -v) less the process's size now
 * (/proc/self/statm), and the cgroup's memory.max less its memory.current (a container's
 * limit). A figure that cannot be read is left out; -1 when none can (not Linux). *from names
 * the figure that won ("MemAvailable", "ulimit -v", "the cgroup's memory.max"). */
double sysmem_available(const char **from);

#endif
