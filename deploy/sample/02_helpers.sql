-- Session-local helpers for generating the sample rows deterministically.
-- They live in pg_temp, so they vanish with the loading session and never
-- show up in the catalog.
--
-- Nothing here uses random(): every value is a hash of the row number and a
-- per-column salt, so the data are identical on every load, whatever the plan
-- or the number of parallel workers.

-- h returns a stable pseudo-random integer in [0, n).
CREATE FUNCTION pg_temp.h(i bigint, salt integer, n integer) RETURNS integer
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT ((hashint8(i * 1000003 + salt)::bigint + 2147483648) % n)::integer $$;

-- pick returns a stable pseudo-random element of arr.
CREATE FUNCTION pg_temp.pick(arr text[], i bigint, salt integer) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT arr[1 + pg_temp.h(i, salt, cardinality(arr))] $$;

-- frac returns a stable pseudo-random number in [0, 1).
CREATE FUNCTION pg_temp.frac(i bigint, salt integer) RETURNS numeric
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT pg_temp.h(i, salt, 1000000) / 1000000.0 $$;

-- The data span the two years before this fixed anchor, so results do not
-- drift with the calendar.
CREATE FUNCTION pg_temp.anchor() RETURNS timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT timestamptz '2025-06-30 18:00:00+00' $$;

CREATE FUNCTION pg_temp.first_names() RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT ARRAY['Anna','Lukas','Sofia','Noah','Emma','Liam','Mia','Elias','Lea','Jonas',
  'Clara','Felix','Marie','Paul','Lina','Leon','Julia','Matteo','Chloe','Hugo',
  'Camille','Louis','Ines','Gabriel','Lucia','Mateo','Martina','Pablo','Giulia','Lorenzo',
  'Freya','Oscar','Saoirse','Conor','Eva','Daan','Fleur','Sem','Ida','Magnus',
  'Zofia','Jakub','Nora','Elif','Amir','Yasmin','Tomas','Katarina'] $$;

CREATE FUNCTION pg_temp.last_names() RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT ARRAY['Müller','Schmidt','Schneider','Fischer','Weber','Meyer','Wagner','Becker',
  'Martin','Bernard','Dubois','Thomas','Robert','Richard','Petit','Durand',
  'García','Fernández','López','Martínez','Sánchez','Pérez','Rossi','Russo',
  'Ferrari','Esposito','Bianchi','Romano','de Jong','Jansen','de Vries','van den Berg',
  'Bakker','Murphy','Kelly','O''Brien','Walsh','Nowak','Kowalski','Novák',
  'Svoboda','Andersson','Johansson','Nielsen','Hansen','Gruber','Huber','Yilmaz'] $$;

-- City, postal code prefix and country of the shop's customers.
CREATE FUNCTION pg_temp.cities() RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT ARRAY['Berlin|10|DE','Hamburg|20|DE','Munich|80|DE','Cologne|50|DE','Frankfurt|60|DE',
  'Stuttgart|70|DE','Leipzig|04|DE','Paris|75|FR','Lyon|69|FR','Marseille|13|FR','Toulouse|31|FR',
  'Amsterdam|10|NL','Rotterdam|30|NL','Utrecht|35|NL','Madrid|28|ES','Barcelona|08|ES',
  'Valencia|46|ES','Milan|20|IT','Rome|00|IT','Turin|10|IT','Vienna|10|AT','Graz|80|AT',
  'Dublin|D0|IE','Cork|T1|IE','Brussels|10|BE','Antwerp|20|BE','Copenhagen|21|DK',
  'Stockholm|11|SE','Warsaw|00|PL','Prague|11|CZ','Zurich|80|CH','Geneva|12|CH'] $$;

CREATE FUNCTION pg_temp.streets() RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT ARRAY['Main Street','Station Road','Market Square','Church Lane','Park Avenue',
  'Harbour Street','Mill Road','King Street','Garden Row','River Walk','Castle Hill',
  'Bridge Street','Lindenallee','Rue de la Paix','Calle Mayor','Via Roma','Kerkstraat',
  'Hauptstraße','Avenue Victor Hugo','Gran Vía'] $$;
