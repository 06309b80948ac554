"""Tink's own hybrid encryption, the way the Firebase Android SDK uses it, for the Android tests.

  keygen DIR [KIND]    makes an ECIES-P256-HKDF-HMAC-SHA256-AES128-GCM keyset (the SDK's template),
                       keeps it in DIR/private.bin and prints its public keyset the way the SDK
                       sends it as `publicKey`: binary, base64url with Android's line wrapping.
                       KIND varies the template: compressed (point format), raw or legacy (output
                       prefix), aes256 (the DEM's key), ctr (an AES-CTR-HMAC DEM), x25519 (HPKE).
  decrypt DIR TEXT     decrypts TEXT (base64url) as GenericIdpActivity does (no context info).
"""
import base64
import os
import sys

import tink
from tink import aead, hybrid, proto_keyset_format, secret_key_access
from tink.proto import ecies_aead_hkdf_pb2, tink_pb2

hybrid.register()


def template(kind):
    templates = hybrid.hybrid_key_templates
    if kind == "android":
        return templates.ECIES_P256_HKDF_HMAC_SHA256_AES128_GCM
    if kind == "compressed":
        return templates.ECIES_P256_COMPRESSED_HKDF_HMAC_SHA256_AES128_GCM
    if kind == "ctr":
        return templates.ECIES_P256_HKDF_HMAC_SHA256_AES128_CTR_HMAC_SHA256
    if kind == "x25519":
        return templates.DHKEM_X25519_HKDF_SHA256_HKDF_SHA256_AES_128_GCM
    result = tink_pb2.KeyTemplate()
    result.CopyFrom(templates.ECIES_P256_HKDF_HMAC_SHA256_AES128_GCM)
    if kind == "raw":
        result.output_prefix_type = tink_pb2.RAW
    elif kind == "legacy":
        result.output_prefix_type = tink_pb2.LEGACY
    elif kind == "aes256":
        key_format = ecies_aead_hkdf_pb2.EciesAeadHkdfKeyFormat.FromString(result.value)
        key_format.params.dem_params.aead_dem.CopyFrom(aead.aead_key_templates.AES256_GCM)
        result.value = key_format.SerializeToString()
    else:
        sys.exit("unknown key kind " + kind)
    return result


def main():
    command, directory = sys.argv[1], sys.argv[2]
    path = os.path.join(directory, "private.bin")
    if command == "keygen":
        handle = tink.new_keyset_handle(template(sys.argv[3] if len(sys.argv) > 3 else "android"))
        with open(path, "wb") as file:
            file.write(proto_keyset_format.serialize(handle, secret_key_access.TOKEN))
        public = proto_keyset_format.serialize_without_secret(handle.public_keyset_handle())
        text = base64.urlsafe_b64encode(public).decode()
        # android.util.Base64.encodeToString(bytes, URL_SAFE): lines of 76 characters, each ended by \n.
        print("".join(text[i:i + 76] + "\n" for i in range(0, len(text), 76)), end="")
    elif command == "decrypt":
        with open(path, "rb") as file:
            handle = proto_keyset_format.parse(file.read(), secret_key_access.TOKEN)
        text = sys.argv[3]
        ciphertext = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        sys.stdout.write(handle.primitive(hybrid.HybridDecrypt).decrypt(ciphertext, b"").decode())
    else:
        sys.exit("unknown command " + command)


if __name__ == "__main__":
    main()
