/*
 * model.h: ctrain's model, a character-level language model in the manner
 * of Bengio et al. (2003): the CONTEXT characters before a position, each
 * embedded in EMBED floats, concatenated, one hidden layer of HIDDEN tanh
 * units, and a softmax over the vocabulary that predicts the next
 * character, trained on the cross-entropy.
 *
 * Every parameter lives in one flat array of f32 (ct_model_size floats),
 * so that the gradient, Adam's moments and the ranks' slices of them are
 * plain ranges of one vector; ct_model_layout says where each tensor is.
 */
#ifndef CT_MODEL_H
#define CT_MODEL_H

#include <stddef.h>
#include <stdint.h>

struct ct_dims {
	int vocab;		/* characters the text holds */
	int context;		/* characters the model sees before the one it predicts */
	int embed;		/* floats per character */
	int hidden;		/* tanh units */
};

/* The tensors of the flat vector, in order (row-major). */
enum { CT_EMB, CT_W1, CT_B1, CT_W2, CT_B2, CT_NTENSORS };

struct ct_tensor {
	const char *name;	/* "emb", "w1", ... (the checkpoint's names) */
	int ndim;		/* 1 or 2 */
	uint64_t shape[2];
	size_t offset;		/* its first float in the flat vector */
};

/* The tensors' names, shapes and offsets for dims: t[CT_NTENSORS]. */
void ct_model_layout(const struct ct_dims *d, struct ct_tensor *t);
/* Floats of the flat vector. */
size_t ct_model_size(const struct ct_dims *d);
/* Fill theta with its initial values, a function of seed alone. */
void ct_model_init(const struct ct_dims *d, uint64_t seed, float *theta);

/* Scratch memory of one forward and backward pass. */
struct ct_work;
struct ct_work *ct_work_new(const struct ct_dims *d);
void ct_work_free(struct ct_work *w);

/* The gradient of the summed cross-entropy of n examples at theta, into
 * grad (ct_model_size floats, overwritten): example k predicts
 * targets[k] from the characters ctx[k * context ...] (vocabulary
 * indices). Returns the summed loss. The examples are added in their
 * order, so the result depends on theta and the examples alone. */
float ct_model_grad(const struct ct_dims *d, struct ct_work *w, const float *theta,
    const uint8_t *ctx, const uint8_t *targets, int n, float *grad);

/* Check ct_model_grad against central differences of the loss (a step
 * of 0.01 each way) at count parameters drawn from seed, as many of each
 * tensor: the largest relative difference |a - n| / max(|a| + |n|, 0.01)
 * (the floor keeps float rounding of near-zero gradients out). theta is
 * put back as it was. */
double ct_model_gradcheck(const struct ct_dims *d, struct ct_work *w, float *theta,
    const uint8_t *ctx, const uint8_t *targets, int n, uint64_t seed, int count);

/* splitmix64 (Steele, Lea, Flood 2014): ctrain's one source of
 * randomness, a pure function of its input. */
uint64_t ct_mix(uint64_t x);

#endif
