/**
 * The one way the relay asks the Images binding for a picture (stored originals and `?w=`
 * thumbnails): bytes in, transforms, a format out, the output's bytes and type back. A
 * call that throws is tried once more before its error is passed on: the binding is a
 * service call (locally, a loopback connection to sharp, which drops now and then under
 * load), and the same input always gives the same output, so a second try is safe.
 */

export interface BindingOutput {
  bytes: Uint8Array;
  contentType: string;
}

async function once(env: Env, bytes: Uint8Array, transforms: readonly ImageTransform[], format: ImageOutputOptions["format"]): Promise<BindingOutput> {
  const input = env.IMAGES.input(new Blob([bytes]).stream());
  const result = await transforms.reduce((image, transform) => image.transform(transform), input).output({ format });
  return { bytes: new Uint8Array(await result.response().arrayBuffer()), contentType: result.contentType() };
}

export async function transformImage(env: Env, bytes: Uint8Array, transforms: readonly ImageTransform[], format: ImageOutputOptions["format"]): Promise<BindingOutput> {
  try {
    return await once(env, bytes, transforms, format);
  } catch {
    return once(env, bytes, transforms, format);
  }
}
