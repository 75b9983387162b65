// A service's memory, from glibc's calls the Glibc module leaves out: the loader's list of
// loaded objects and their segments (dl_iterate_phdr, declared only for GNU code), whose
// read-only segments are the start-up pages a service gives back, and malloc's arenas (mallopt,
// malloc.h). As in CProcessControl, no system header is included (one included here can take
// over its declarations from the Glibc module); the layouts are link.h's and elf.h's, for 64-bit
// and 32-bit ELF.
#ifndef LOCATIONKEEPALIVE_CPROCESSMEMORY_SHIM_H
#define LOCATIONKEEPALIVE_CPROCESSMEMORY_SHIM_H

/// One program header (ElfW(Phdr)): 64-bit ELF puts the flags second, 32-bit sixth.
#if defined(__LP64__)
struct cmemory_segment {
    unsigned int type;
    unsigned int flags;
    unsigned long offset, vaddr, paddr, filesz, memsz, align;
};
#else
struct cmemory_segment {
    unsigned int type;
    unsigned long offset, vaddr, paddr, filesz, memsz;
    unsigned int flags;
    unsigned long align;
};
#endif

/// The start of struct dl_phdr_info: where the object is loaded, its name, its program headers.
struct cmemory_object {
    unsigned long address;
    const char *name;
    const struct cmemory_segment *segments;
    unsigned short segmentCount;
};

/// glibc's dl_iterate_phdr (link.h): calls `callback` once per loaded object, holding the
/// loader's lock, until it returns non-zero.
int dl_iterate_phdr(int (*callback)(struct cmemory_object *object, unsigned long size, void *context), void *context);

/// PT_LOAD and PF_W (elf.h).
#define CMEMORY_PT_LOAD 1
#define CMEMORY_PF_W 2

/// glibc's mallopt (malloc.h), and its M_ARENA_MAX: how many arenas malloc may make.
int mallopt(int parameter, int value);
#define CMEMORY_M_ARENA_MAX -8

#endif
