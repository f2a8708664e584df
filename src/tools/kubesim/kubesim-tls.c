/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "kubesim-tls.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "meshsync-error.h"

G_DEFINE_AUTOPTR_CLEANUP_FUNC(EVP_PKEY, EVP_PKEY_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(X509, X509_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(BIO, BIO_free)

static gboolean
add_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509_EXTENSION *ext;
	gboolean ok;

	X509V3_set_ctx_nodb(&ctx);
	X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
	if (ext == NULL)
		return FALSE;
	ok = X509_add_ext(cert, ext, -1) == 1;
	X509_EXTENSION_free(ext);
	return ok;
}

static X509 *
make_cert(EVP_PKEY *key, const char *cn, X509 *issuer, EVP_PKEY *issuer_key, gboolean is_ca)
{
	g_autoptr(X509) cert = X509_new();
	X509_NAME *name;
	guchar serial[16];
	BIGNUM *bn;

	X509_set_version(cert, 2);
	{
		guint i;
		for (i = 0; i < sizeof(serial); i++)
			serial[i] = g_random_int_range(0, 256);
		serial[0] &= 0x7f;
	}
	bn = BN_bin2bn(serial, sizeof(serial), NULL);
	BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert));
	BN_free(bn);
	X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
	X509_gmtime_adj(X509_getm_notAfter(cert), 60L * 60 * 24 * 365);
	X509_set_pubkey(cert, key);
	name = X509_get_subject_name(cert);
	X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const guchar *)cn, -1, -1, 0);
	X509_set_issuer_name(cert, issuer != NULL ? X509_get_subject_name(issuer) : name);
	if (is_ca) {
		if (!add_ext(cert, cert, NID_basic_constraints, "critical,CA:TRUE") ||
		    !add_ext(cert, cert, NID_key_usage,
		             "critical,keyCertSign,cRLSign,digitalSignature") ||
		    !add_ext(cert, cert, NID_subject_key_identifier, "hash"))
			return NULL;
	} else {
		if (!add_ext(cert, issuer, NID_basic_constraints, "critical,CA:FALSE") ||
		    !add_ext(cert, issuer, NID_key_usage,
		             "critical,digitalSignature,keyEncipherment") ||
		    !add_ext(cert, issuer, NID_ext_key_usage, "serverAuth") ||
		    !add_ext(cert, issuer, NID_subject_alt_name,
		             "DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,IP:127.0.0.1,"
		             "IP:0:0:0:0:0:0:0:1") ||
		    !add_ext(cert, issuer, NID_authority_key_identifier, "keyid:always"))
			return NULL;
	}
	if (X509_sign(cert, issuer_key, EVP_sha256()) == 0)
		return NULL;
	return g_steal_pointer(&cert);
}

static gchar *
bio_to_string(BIO *bio)
{
	char *data = NULL;
	long len = BIO_get_mem_data(bio, &data);

	return g_strndup(data, len);
}

GTlsCertificate *
kubesim_tls_generate(gchar **ca_pem_out, GError **error)
{
	g_autoptr(EVP_PKEY) ca_key = EVP_EC_gen("P-256");
	g_autoptr(EVP_PKEY) server_key = EVP_EC_gen("P-256");
	g_autoptr(X509) ca = NULL;
	g_autoptr(X509) server = NULL;
	g_autoptr(BIO) ca_bio = BIO_new(BIO_s_mem());
	g_autoptr(BIO) server_bio = BIO_new(BIO_s_mem());
	g_autofree gchar *ca_pem = NULL;
	g_autofree gchar *server_pem = NULL;
	GTlsCertificate *cert;

	if (ca_key == NULL || server_key == NULL) {
		g_set_error_literal(error, MESHSYNC_ERROR, MESHSYNC_ERROR_TLS,
		                    "TLS: could not generate P-256 keys with libcrypto");
		return NULL;
	}
	ca = make_cert(ca_key, "kubesim-ca", NULL, ca_key, TRUE);
	if (ca != NULL)
		server = make_cert(server_key, "kubesim", ca, ca_key, FALSE);
	if (ca == NULL || server == NULL) {
		g_set_error_literal(
		        error, MESHSYNC_ERROR, MESHSYNC_ERROR_TLS,
		        "TLS: could not build the self-signed CA and server certificate");
		return NULL;
	}
	PEM_write_bio_X509(ca_bio, ca);
	PEM_write_bio_X509(server_bio, server);
	PEM_write_bio_PrivateKey(server_bio, server_key, NULL, NULL, 0, NULL, NULL);
	ca_pem = bio_to_string(ca_bio);
	server_pem = bio_to_string(server_bio);
	cert = g_tls_certificate_new_from_pem(server_pem, -1, error);
	if (cert == NULL)
		return NULL;
	*ca_pem_out = g_steal_pointer(&ca_pem);
	return cert;
}
