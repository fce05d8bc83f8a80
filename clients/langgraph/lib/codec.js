// How a value from LangGraph's serializer is kept in jsonb, and read back.
//
// serde.dumpsTyped(value) gives [type, bytes].  A "json" value whose text
// jsonb can hold is stored as that JSON itself, so it can be read and
// queried in SQL.  Anything else -- another type ("bytes", or a custom
// serializer's), or JSON that jsonb refuses (a \u0000 in a string, an
// unpaired surrogate) -- is stored as the tagged object
//   {"$wl": type, "b64": base64 of the bytes}
// A JSON value whose text contains the tag's key anywhere is stored tagged
// as well, so a value stored plain never has that shape and a stored value
// is tagged exactly when it begins with the tag.  The tagged object's keys
// have the same length, and jsonb orders such keys bytewise, so its text as
// PostgreSQL prints it always begins with TAGGED.

const TAG = '$wl';
const TAGGED = '{"$wl": ';
const UNSAFE = /\\u(0000|d[89a-f])/i;

const decoder = new TextDecoder();

// The jsonb text (a parameter of type jsonb) of one value.
export async function encodeValue(serde, value) {
  const [type, bytes] = await serde.dumpsTyped(value);
  return encodeTyped(type, bytes);
}

export function encodeTyped(type, bytes) {
  if (type === 'json') {
    const text = typeof bytes === 'string' ? bytes : decoder.decode(bytes);
    if (!UNSAFE.test(text) && !text.includes(`"${TAG}"`)) return text;
    return JSON.stringify({ [TAG]: type, b64: Buffer.from(text, 'utf8').toString('base64') });
  }
  const raw = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return JSON.stringify({ [TAG]: type, b64: raw.toString('base64') });
}

// The value of a stored jsonb, given as its text.
export async function decodeValue(serde, text) {
  if (text.startsWith(TAGGED)) {
    const { [TAG]: type, b64 } = JSON.parse(text);
    const raw = Buffer.from(b64, 'base64');
    return serde.loadsTyped(type, type === 'json' ? raw.toString('utf8') : new Uint8Array(raw));
  }
  return serde.loadsTyped('json', text);
}
