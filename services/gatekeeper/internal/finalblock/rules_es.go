package finalblock

// spanish is the reviewed Spanish table.
//
//nolint:misspell // the words are another language's
var spanish = langSpec{
	tag: "es",
	rules: []rule{
		// work
		done(ScopeWork, "(está|están|ya está|quedó|quedaron) (ya |todo |)(listo|lista|listos|listas)").fin("para"),
		done(ScopeWork, "(está|están|esta|estan|quedó|quedaron|ha sido|han sido|fue|fueron) (ya |completamente |)(hecho|hecha|terminado|"+
			"terminada|terminados|completado|completada|arreglado|arreglada|corregido|corregida|solucionado|solucionada|resuelto|resuelta|"+
			"implementado|implementada)").nb("por mediante con como en"),
		done(ScopeWork, "(listo|hecho|terminado|completado)").pred().na("el un lo"),
		done(ScopeWork, "(he|hemos) (ya |)(terminado|completado|arreglado|corregido|solucionado|resuelto|implementado)"),
		done(ScopeWork, "funciona (ahora|correctamente|bien|de nuevo|otra vez|como se esperaba)"),
		done(ScopeWork, "(ahora|ya|todo) funciona").fin(),
		// tests
		done(ScopeTests, "(todas las |las |)pruebas (ya |ahora |)(pasan|pasaron|han pasado|están pasando|están en verde|están verdes|"+
			"son exitosas|fueron exitosas)"),
		done(ScopeTests, "(todos los |los |)tests (ya |ahora |)(pasan|pasaron|han pasado|están pasando|están en verde|están verdes)"),
		// build
		done(ScopeBuild, "(la compilación|el build|la build) (ya |ahora |)(pasa|pasó|funciona|es exitosa|fue exitosa|fue exitoso|"+
			"está en verde)"),
		done(ScopeBuild, "compila (sin errores|correctamente|sin advertencias)"),
		// deploy
		done(ScopeDeploy, "(desplegado|desplegada|desplegué|publicado|publicada|publiqué) (en|a) (producción|prod|staging|"+
			"el entorno de producción)"),
		done(ScopeDeploy, "(he|hemos) (desplegado|publicado)"),
		done(ScopeDeploy, "(está|están|ya está) (desplegado|desplegada|en producción)").nb("por mediante con como automáticamente"),
		// merge
		done(ScopeMerge, "(fusionado|fusionada|fusioné|mergeado|mergeada|mergeé|integrado|integrada|subido|subida) (en|a|con|hacia) "+
			"(main|master|la rama main|la rama principal)"),
		done(ScopeMerge, "(he|hemos) (fusionado|mergeado|hecho merge|hecho push)"),
		done(ScopeMerge, "(el pr|la pr|el pull request|la rama) (ya |)(está|fue|ha sido) (fusionado|fusionada|mergeado|mergeada|"+
			"integrado|integrada)"),
		// blocked
		blocked("no (puedo|podemos|pude|pudimos) (continuar|seguir|avanzar|proceder)"),
		blocked("(estoy|estamos|sigo|seguimos) (bloqueado|bloqueada|bloqueados|atascado|atascada|atascados|trabado|trabada)"),
		blocked("no (tengo|tenemos) (acceso|permisos|permiso|credenciales|las credenciales)"),
		// delegation
		request("por favor (envía|envíame|envíe|envíeme|manda|mándame|proporciona|proporcióname|proporcione|comparte|comparta|ejecuta|" +
			"ejecute|agrega|agregue|añade|añada|crea|cree|reinicia|reinicie|instala|instale|configura|configure|dame|deme|sube|suba)"),
		request("(puedes|podrías|pueden|podrían|puede usted|podría usted) (enviarme|mandarme|proporcionarme|darme|pasarme|compartir|" +
			"ejecutar|agregar|añadir|crear|reiniciar|instalar|configurar|enviar|proporcionar|subir)"),
		request("(envíame|mándame|pásame|dame|proporcióname|envíenme)"),
		request("necesito que"),
		request("(tendrás|usted tendrá) que"),
	},
	negators:          "no nunca jamás ningún ninguna ninguno nada sin casi parcialmente tampoco ni apenas",
	hypotheticals:     "si cuando una después antes será serán sería serían debe deben para asegúrate asegúrese verifica verifique comprueba compruebe espero ojalá",
	hypotheticalPairs: "una vez|hay que|en cuanto|antes de|después de|tiene que|tienen que|hasta que",
	imperatives:       "verifica verifique comprueba compruebe ejecuta ejecute",
	leadIns:           "luego después ahora primero",
	conjunctions:      "y pero así porque aunque mientras luego entonces sino",
	linking:           "está están esta estan es son fue fueron ya todo ahora completamente quedó queda",
	complementizers:   "que",
}
