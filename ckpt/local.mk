# ckpt/local.mk: object stores, the chunk codec and the checkpoint format.
libckpt_a_SOURCES += ckpt/store.h ckpt/store.c ckpt/store-file.c ckpt/store-int.h \
	ckpt/codec.h ckpt/codec.c ckpt/zframe.c ckpt/zframe.h
